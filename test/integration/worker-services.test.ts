/**
 * Worker services as operators see them (issue 32, item 5): each worker announces its service,
 * group, classes and handled job types on kairos.workers; `kairos workers` (GET /v1/workers)
 * shows every group with its members and lag; a group still in use cannot be retired; a group no
 * service uses any more is retired with `kairos workers retire` and leaves the lists.
 */
import type { WorkerGroupView } from '@kairos/api';
import { expect, test } from 'vitest';
import { json, kairos } from '../support/cli.js';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';

type Group = WorkerGroupView;

test('kairos workers lists each service with its classes, types and members; retire refuses a group in use, then removes it', async () => {
  const ns = await useNamespace('worker-services');
  const p = await startPipeline(ns);
  const mailerGroup = `${ns.prefix}mailer`;
  const billingGroup = `${ns.prefix}billing`;
  const mailer = p.worker({
    service: 'mailer',
    groupId: mailerGroup,
    resourceClasses: ['io'],
    registryIntervalMs: 500,
  });
  mailer.handle('mail.send', () => undefined);
  const billing = p.worker({
    service: 'billing',
    groupId: billingGroup,
    resourceClasses: ['io', 'default'],
    registryIntervalMs: 500,
  });
  billing.handle('invoice.make', () => undefined).handle('invoice.mail', () => undefined);
  await Promise.all([mailer.start(), billing.start()]);

  const groups = async () => json<{ groups: Group[] }>(await kairos(p, ['--json', 'workers'])).groups;
  const find = (gs: Group[], id: string) => gs.find((g) => g.group === id);
  let seen: Group[] = [];
  await eventually(
    'both services to be listed with their members',
    async () => {
      seen = await groups();
      return find(seen, mailerGroup)?.members === 1 && find(seen, billingGroup)?.members === 1;
    },
    30_000,
  );
  expect(find(seen, mailerGroup)).toMatchObject({
    services: ['mailer'],
    resource_classes: ['io'],
    job_types: ['mail.send'],
    state: 'Stable',
    workers: [{ live: true }],
  });
  expect(find(seen, billingGroup)).toMatchObject({
    services: ['billing'],
    resource_classes: ['default', 'io'],
    job_types: ['invoice.mail', 'invoice.make'],
  });
  const table = await kairos(p, ['workers']);
  expect(table.code).toBe(0);
  expect(table.stdout).toMatch(/mailer.*io.*mail\.send/);

  // In use: refused, and nothing changes.
  const refused = await kairos(p, ['workers', 'retire', mailerGroup]);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toMatch(new RegExp(`${mailerGroup}.*1 member.*stop its workers first`));
  expect(find(await groups(), mailerGroup)?.members).toBe(1);

  // The mailer service is shut down for good: its clean stop says so, then it is retired.
  await mailer.stop();
  await eventually('the stopped mailer to have no workers left', async () => {
    const g = find(await groups(), mailerGroup);
    return g?.members === 0 && g.workers.length === 0;
  });
  const retired = await kairos(p, ['workers', 'retire', mailerGroup]);
  expect(retired.code, retired.stderr).toBe(0);
  expect(retired.stdout).toContain(`${mailerGroup} retired`);
  const after = await groups();
  expect(find(after, mailerGroup)).toBeUndefined();
  expect(find(after, billingGroup)?.members).toBe(1);
  const status = json<{ groups: { group: string }[] }>(await kairos(p, ['--json', 'status']));
  expect(status.groups.map((g) => g.group)).not.toContain(mailerGroup);
  const unknown = await kairos(p, ['workers', 'retire', `${ns.prefix}never-was`]);
  expect(unknown.stderr).toMatch(/NOT_FOUND|no worker group/);
  await billing.stop();
}, 120_000);
