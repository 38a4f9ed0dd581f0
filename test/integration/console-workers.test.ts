import type { Page } from 'playwright-core';
import { expect, onTestFinished, test } from 'vitest';
import { consolePage, launchBrowser, logIn, screenshots, seriousA11yViolations } from '../support/browser.js';
import { useNamespace } from '../support/namespace.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';

// The Workers page (issue 32, item 5) in a real Chromium against the real stack: a named worker
// service announces itself on kairos.workers and the page lists its group, service, classes,
// handled types, members and instance, as `kairos workers` does; once the worker stops cleanly
// its instance leaves; a key that is not an admin key of every tenant is told what it lacks.

/** Makes a key through the API with the pipeline's any-tenant admin key. */
async function makeKey(p: Pipeline, spec: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${p.apiUrl}/v1/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${p.apiKey}` },
    body: JSON.stringify(spec),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { key: string }).key;
}

/** The cells of the group's row in the services table, as text. */
async function groupRow(page: Page, group: string): Promise<string[]> {
  const row = page.getByRole('table', { name: 'Worker services' }).getByRole('row', { name: group });
  if ((await row.count()) === 0) return [];
  return (await row.locator('th, td').allTextContents()).map((t) => t.trim());
}

test('the Workers page lists each service with its classes, handled types, members and instances', async () => {
  const ns = await useNamespace('console-workers');
  const p = await startPipeline(ns);
  const worker = p.worker({ service: 'mailer', resourceClasses: ['io'], registryIntervalMs: 500 });
  worker.handle('mail.send', () => undefined).handle('mail.bounce', () => undefined);
  await worker.start();
  const group = `${ns.prefix}kairos-service.mailer`;

  const browser = await launchBrowser();
  onTestFinished(() => browser.close());
  const shot = screenshots();
  for (const width of ['desktop', 'phone'] as const) {
    const { page, problems } = await consolePage(browser, width);
    await logIn(page, p.apiUrl, p.apiKey);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workers' }).click();
    await page.getByRole('heading', { level: 1, name: 'Workers' }).waitFor();
    // Group, service, classes, types, Kafka state, members, live workers, lag, last seen.
    await expect
      .poll(async () => (await groupRow(page, group)).slice(0, 7), { timeout: 30_000 })
      .toEqual([group, 'mailer', 'io', 'mail.bounce, mail.send', 'Stable', '1', '1']);
    expect((await groupRow(page, group))[8]).not.toBe('—');
    const instance = page
      .getByRole('table', { name: 'Worker instances' })
      .getByRole('row', { name: worker.workerId });
    await expect.poll(() => instance.textContent()).toMatch(/live.*io.*mail\.bounce, mail\.send/);
    await shot(page, 'workers', width);
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  }

  // A clean stop removes the instance; the group stays, with no member, until it is retired. The
  // page sees it at its next refresh (every 10 s).
  await worker.stop();
  const { page, problems } = await consolePage(browser);
  await logIn(page, p.apiUrl, p.apiKey);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workers' }).click();
  await expect
    .poll(async () => (await groupRow(page, group)).slice(5, 7), { timeout: 40_000 })
    .toEqual(['0', '0']);
  await page.getByText('No worker instance has been heard from in the last hour.').waitFor();
  expect(problems).toEqual([]);
}, 120_000);

test('a key that is not an admin key of every tenant is told what the Workers page needs', async () => {
  const ns = await useNamespace('console-workers-keys');
  const p = await startPipeline(ns);
  const browser = await launchBrowser();
  onTestFinished(() => browser.close());
  const cases = [
    { spec: { name: 'acme-admin', tenant: 'acme', scopes: ['admin'] }, lacks: /tenant acme only/ },
    { spec: { name: 'reader', tenant: '*', scopes: ['jobs:read'] }, lacks: /lacks the admin scope/ },
  ];
  for (const { spec, lacks } of cases) {
    const { page, problems } = await consolePage(browser);
    await logIn(page, p.apiUrl, await makeKey(p, spec));
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workers' }).click();
    const notice = page.getByRole('status').filter({ hasText: 'admin' });
    await expect
      .poll(() => notice.textContent())
      .toMatch(/needs an API key with the admin scope for every tenant/);
    expect(await notice.textContent()).toMatch(lacks);
    expect(await page.getByRole('table').count()).toBe(0);
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  }
}, 60_000);
