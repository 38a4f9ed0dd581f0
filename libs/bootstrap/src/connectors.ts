import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';

export interface ConnectorFile {
  readonly name: string;
  readonly config: Record<string, string>;
}

/** The schema-qualified outbox table the connector files name in their heartbeat action query. */
const FILE_OUTBOX = 'public.outbox';

/**
 * The connector's heartbeat action query (an outbox row every heartbeat interval, so publication
 * lag is known even when idle) aimed at `schema`'s outbox, like its `table.include.list`: the
 * setting to change, none when there is no query or it already names that outbox (`public`).
 */
export function heartbeatQueryFor(
  config: Readonly<Record<string, string>>,
  schema: string,
): Record<string, string> {
  const query = config['heartbeat.action.query'];
  if (query === undefined || schema === 'public') return {};
  const table = `"${schema.replaceAll('"', '""')}".outbox`;
  return { 'heartbeat.action.query': query.replaceAll(FILE_OUTBOX, table) };
}

/** Reads every connectors/*.json ({ name, config }) in name order. */
export function readConnectorFiles(dir: string): ConnectorFile[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const parsed = JSON.parse(readFileSync(resolve(dir, f), 'utf8')) as Partial<ConnectorFile>;
      if (typeof parsed.name !== 'string' || typeof parsed.config !== 'object' || parsed.config === null) {
        throw new Error(`${f}: a connector file must be {"name": string, "config": {...}}`);
      }
      return { name: parsed.name, config: parsed.config };
    });
}

/**
 * Creates or updates a connector through the Connect REST API (PUT is idempotent) and waits until
 * the connector and all of its tasks are RUNNING.
 */
export async function upsertConnector(
  connectUrl: string,
  connector: ConnectorFile,
  timeoutMs = 60_000,
): Promise<void> {
  const res = await fetch(`${connectUrl}/connectors/${encodeURIComponent(connector.name)}/config`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(connector.config),
  });
  if (!res.ok) throw new Error(`connector ${connector.name}: ${res.status} ${await res.text()}`);
  await waitConnectorRunning(connectUrl, connector.name, timeoutMs);
}

interface ConnectorStatus {
  connector: { state: string; trace?: string };
  tasks: { id: number; state: string; trace?: string }[];
}

export async function waitConnectorRunning(connectUrl: string, name: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  let last = 'no status yet';
  let delay = 200;
  let restartedAt: number | undefined;
  while (Date.now() < deadline) {
    const res = await fetch(`${connectUrl}/connectors/${encodeURIComponent(name)}/status`);
    if (res.ok) {
      const status = (await res.json()) as ConnectorStatus;
      const failed = [status.connector, ...status.tasks].find((s) => s.state === 'FAILED');
      // Status lags a restart by a moment: judge a FAILED state only a few seconds after it.
      if (failed && restartedAt !== undefined && Date.now() - restartedAt > 5000) {
        throw new Error(`connector ${name} FAILED: ${failed.trace?.split('\n')[0] ?? ''}`);
      }
      if (failed && restartedAt === undefined) {
        // A config update does not restart a failed task (e.g. one that failed before its table
        // existed): restart it once, then judge.
        restartedAt = Date.now();
        await fetch(
          `${connectUrl}/connectors/${encodeURIComponent(name)}/restart?includeTasks=true&onlyFailed=true`,
          {
            method: 'POST',
          },
        );
        continue;
      }
      if (
        !failed &&
        status.connector.state === 'RUNNING' &&
        status.tasks.length > 0 &&
        status.tasks.every((t) => t.state === 'RUNNING')
      ) {
        return;
      }
      last = `${status.connector.state}, tasks ${status.tasks.map((t) => t.state).join(',') || 'none'}`;
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 1000);
  }
  throw new Error(`connector ${name} not RUNNING after ${timeoutMs} ms (${last})`);
}

export async function deleteConnector(connectUrl: string, name: string): Promise<void> {
  const res = await fetch(`${connectUrl}/connectors/${encodeURIComponent(name)}`, { method: 'DELETE' });
  if (!res.ok && res.status !== 404) throw new Error(`delete connector ${name}: ${res.status}`);
}
