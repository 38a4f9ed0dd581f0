import { resolve } from 'node:path';
import { registerNamespacedOutboxConnector } from '@kairos/ops';
import type { Namespace } from './namespace.js';

/** The production outbox connector re-pointed at the namespace's schema and prefix; removed on cleanup. */
export async function registerOutboxConnector(ns: Namespace): Promise<void> {
  const remove = await registerNamespacedOutboxConnector({
    connectUrl: ns.services.connectUrl,
    pgUrl: ns.services.pgUrl,
    connectorsDir: resolve(import.meta.dirname, '..', '..', 'connectors'),
    id: ns.id,
    topicPrefix: ns.prefix,
    schema: ns.schema,
  });
  ns.defer(remove);
}
