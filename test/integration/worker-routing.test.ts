/**
 * Routing by job type between worker services (issue 32, items 1 and 2): services sharing class
 * io, each named (`service`), never take each other's jobs; a worker without a name keeps its
 * types on the class topic; a type no live worker handles waits (counted), and runs once a
 * service that handles it starts; a service restarted with a handler removed gives back what it
 * cannot run, and nothing is dead-lettered for lack of a handler.
 */
import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';

test('services sharing a class run only their own types; an unhandled type waits, then runs once its service starts', async () => {
  const ns = await useNamespace('worker-routing');
  const p = await startPipeline(ns);
  const ran = new Map<string, string[]>();
  const handler = (who: string) => (_: unknown, ctx: { jobId: string }) =>
    void ran.set(ctx.jobId, [...(ran.get(ctx.jobId) ?? []), who]);
  const options = { resourceClasses: ['io'], registryIntervalMs: 500 };
  const mailer = p.worker({ ...options, service: 'mailer' }).handle('mail.send', handler('mailer'));
  const billing = p.worker({ ...options, service: 'billing' }).handle('invoice.make', handler('billing'));
  const plain = p.worker(options).handle('demo.hello', handler('plain'));
  await Promise.all([mailer.start(), billing.start(), plain.start()]);

  const create = async (type: string, n: number) =>
    (
      await p.commands.createJobs(
        Array.from({ length: n }, (_, i) => ({
          tenant: 'acme',
          type,
          resource_class: 'io',
          payload: { i },
          due_at: new Date(Date.now() + 200).toISOString(),
        })),
      )
    ).map((c) => c.job.id);
  const mail = await create('mail.send', 100);
  const invoices = await create('invoice.make', 100);
  const hello = await create('demo.hello', 50);
  const reports = await create('report.build', 20);
  const states = async () =>
    Object.fromEntries(
      (
        await p.pool.query<{ state: string; n: number }>(
          'SELECT state, count(*)::int AS n FROM jobs GROUP BY state',
        )
      ).rows.map((r) => [r.state, r.n]),
    );
  await eventually('the handled jobs to succeed', async () => (await states()).SUCCEEDED === 250, 90_000);
  for (const [ids, who] of [
    [mail, 'mailer'],
    [invoices, 'billing'],
    [hello, 'plain'],
  ] as const) {
    for (const id of ids) expect(ran.get(id), `${who}'s job ${id}`).toEqual([who]);
  }
  // Nobody handles report.build: it waits, counted, never failed.
  await eventually('the report jobs to be counted as waiting', async () =>
    (await p.delayTier.metrics.registry.metrics()).includes(
      'kairos_tasks_waiting{resource_class="io",job_type="report.build"} 20',
    ),
  );
  expect(await states()).toEqual({ SUCCEEDED: 250, QUEUED: 20 });
  for (const id of reports) expect(ran.get(id)).toBeUndefined();

  // The service that handles them starts: each runs once.
  const reporter = p.worker({ ...options, service: 'reports' }).handle('report.build', handler('reports'));
  await reporter.start();
  await eventually('the report jobs to succeed', async () => (await states()).SUCCEEDED === 270, 60_000);
  for (const id of reports) expect(ran.get(id)).toEqual(['reports']);

  // billing is redeployed without invoice.make and with invoice.mail: what it cannot run waits.
  await billing.stop();
  const billing2 = p.worker({ ...options, service: 'billing' }).handle('invoice.mail', handler('billing2'));
  await billing2.start();
  const mails = await create('invoice.mail', 20);
  const orphans = await create('invoice.make', 20);
  await eventually('the invoice mails to succeed', async () => (await states()).SUCCEEDED === 290, 60_000);
  for (const id of mails) expect(ran.get(id)).toEqual(['billing2']);
  for (const id of orphans) expect(ran.get(id)).toBeUndefined();
  mailer.handle('invoice.make', handler('mailer'));
  await eventually(
    'the orphaned invoices to succeed',
    async () => (await states()).SUCCEEDED === 310,
    60_000,
  );
  for (const id of orphans) expect(ran.get(id)).toEqual(['mailer']);
  expect((await states()).FAILED).toBeUndefined();
}, 300_000);
