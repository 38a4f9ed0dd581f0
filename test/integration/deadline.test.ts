import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';

test('a job whose deadline passed when it comes due is EXPIRED and never dispatched', async () => {
  const ns = await useNamespace('deadline');
  const p = await startPipeline(ns);
  const ran = new Set<string>();
  const worker = p.worker();
  worker.handle('deadline.check', (_payload, ctx) => void ran.add(ctx.jobId));
  await worker.start();

  const now = Date.now();
  const [late, fine] = await p.commands.createJobs([
    {
      tenant: 'acme',
      type: 'deadline.check',
      resource_class: 'default',
      due_at: new Date(now - 10_000).toISOString(),
      deadline_at: new Date(now - 5_000).toISOString(),
    },
    {
      tenant: 'acme',
      type: 'deadline.check',
      resource_class: 'default',
      deadline_at: new Date(now + 60_000).toISOString(),
    },
  ]);
  const state = async (id: string) => (await p.commands.getJob(id)).state;
  await eventually('both jobs to finish', async () => {
    return (await state(late!.job.id)) === 'EXPIRED' && (await state(fine!.job.id)) === 'SUCCEEDED';
  });
  const expired = await p.commands.getJob(late!.job.id);
  expect(expired.lastError).toMatch(/deadline .* passed before dispatch/);
  expect(expired.dispatchedAt).toBeNull();
  expect(ran.has(late!.job.id)).toBe(false);
  expect(ran.has(fine!.job.id)).toBe(true);
  expect(p.dispatched.map((d) => d.record.job_id)).not.toContain(late!.job.id);
});
