import { expect, onTestFinished, test } from 'vitest';
import { consolePage, launchBrowser, logIn, screenshots, seriousA11yViolations } from '../support/browser.js';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';

test('the overview shows dispatch lag per class, live jobs, canaries and consumer lag, and is usable by keyboard', async () => {
  const ns = await useNamespace('console-overview');
  const p = await startPipeline(ns, { canary: { intervalMs: 1000, stallMs: 6000 } });
  const worker = p.worker({ resourceClasses: ['critical', 'default', 'io'] });
  worker.handle('report.build', () => undefined);
  await worker.start();
  const now = Date.now();
  const done = await p.commands.createJobs(
    ['critical', 'default'].flatMap((rc) =>
      Array.from({ length: 10 }, (_, i) => ({
        tenant: 'acme',
        type: 'report.build',
        resource_class: rc,
        due_at: new Date(now + 500 + i * 50).toISOString(),
      })),
    ),
  );
  // Live ones: far in the future, so they stay SCHEDULED.
  await p.commands.createJobs(
    Array.from({ length: 3 }, () => ({
      tenant: 'acme',
      type: 'report.build',
      resource_class: 'io',
      due_at: new Date(now + 3_600_000).toISOString(),
    })),
  );
  const ids = done.map((r) => r.job.id);
  await eventually('the jobs ran', async () => {
    const r = await p.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND state = 'SUCCEEDED'",
      [ids],
    );
    return r.rows[0]?.n === ids.length;
  });

  const browser = await launchBrowser();
  onTestFinished(() => browser.close());
  const shot = screenshots();
  for (const width of ['desktop', 'phone'] as const) {
    const { page, problems } = await consolePage(browser, width);
    await logIn(page, p.apiUrl, p.apiKey);
    const lag = page.getByRole('table', { name: 'Dispatch lag per class' });
    // The delay tier flushes its lag history every few seconds: the page refreshes itself.
    await expect.poll(() => lag.getByRole('row').count(), { timeout: 30_000 }).toBeGreaterThanOrEqual(3);
    // Each class's ten jobs (and its canaries) counted once the delay tier's history is flushed.
    for (const rc of ['critical', 'default'])
      await expect
        .poll(
          async () =>
            Number(
              await lag
                .getByRole('row', { name: new RegExp(`^${rc} `) })
                .getByRole('cell')
                .nth(1)
                .textContent(),
            ),
          {
            timeout: 30_000,
          },
        )
        .toBeGreaterThanOrEqual(10);
    expect(await page.locator('.lag-chart canvas').count()).toBeGreaterThan(0);
    const live = page.locator('section[aria-labelledby="jobs"] tbody tr', { hasText: 'acme' });
    await expect.poll(() => live.filter({ hasText: 'io' }).textContent()).toMatch(/acme\s*io\s*3/);
    await expect.poll(() => page.locator('section[aria-labelledby="canaries"] tbody tr').count()).toBe(3);
    await expect
      .poll(() => page.locator('section[aria-labelledby="consumers"] tbody tr').count())
      .toBeGreaterThan(0);
    await shot(page, 'overview', width);
    expect(await seriousA11yViolations(page)).toEqual([]);

    // Keyboard only: the skip link comes first and moves focus to the content; the navigation
    // is reachable by Tab and followed by Enter.
    await page.keyboard.press('Tab');
    expect(await page.locator(':focus').textContent()).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.locator(':focus').getAttribute('id')).toBe('main');
    await page.getByRole('link', { name: 'Jobs' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Jobs' }).waitFor();
    expect(problems).toEqual([]);
  }
});
