import { resolve } from 'node:path';
import { deleteConnector, readConnectorFiles } from '@kairos/bootstrap';
import { serviceUrls, type StackConfig } from './config.js';
import { dropSlot } from './outbox-connector.js';

/** A namespaced copy of the outbox connector: `<topic prefix>outbox-<id>`, slot `kairos_<id>`. */
const NAMESPACED = /outbox-([a-z0-9]+)$/;

/**
 * Removes the outbox connectors that tests and benchmarks registered for their own namespaces
 * and did not remove (the process was killed), with their replication slots and publications.
 * Each one keeps a walsender decoding every write of the database, and its slot keeps WAL: a few
 * of them slow the whole stack. The stack's own connectors (connectors/*.json) stay. Run it when
 * no test or benchmark is running: it cannot tell a live namespace from a leaked one.
 */
export async function prune(cfg: StackConfig, log: (line: string) => void): Promise<number> {
  const urls = serviceUrls(cfg);
  const connectUrl = urls.KAIROS_CONNECT_URL!;
  const own = new Set(readConnectorFiles(resolve(cfg.root, 'connectors')).map((c) => c.name));
  const res = await fetch(`${connectUrl}/connectors`);
  if (!res.ok) throw new Error(`list connectors: ${res.status} (is the stack up?)`);
  const names = (await res.json()) as string[];
  let removed = 0;
  for (const name of names) {
    const id = NAMESPACED.exec(name)?.[1];
    if (own.has(name) || id === undefined) continue;
    await deleteConnector(connectUrl, name);
    await dropSlot(urls.KAIROS_PG_URL!, `kairos_${id}`);
    log(`removed connector ${name} and slot kairos_${id}`);
    removed++;
  }
  return removed;
}
