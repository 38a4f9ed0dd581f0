import { PermanentError, TransientError } from '@kairos/worker-sdk';
import type { Page } from 'playwright-core';
import { expect, onTestFinished, test } from 'vitest';
import {
  consolePage,
  launchBrowser,
  logIn,
  screenshots,
  seriousA11yViolations,
  type Width,
} from '../support/browser.js';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline, type Pipeline } from '../support/pipeline.js';

const DAY = 86_400_000;

/** expect.poll with room for a loaded machine (its default gives up after 1 s). */
const poll = <T>(f: () => T | Promise<T>, timeout = 10_000) => expect.poll(f, { timeout });

/** Twelve far-off report jobs, two emails, one job that fails once then succeeds, one that fails for good. */
async function seed(p: Pipeline) {
  const later = new Date(Date.now() + DAY).toISOString();
  const job = (type: string, resource_class: string, payload: unknown, due_at?: string) => ({
    tenant: 'acme',
    type,
    resource_class,
    payload,
    ...(due_at ? { due_at } : {}),
    retry: { base_ms: 100, cap_ms: 100, jitter_ms: 0 },
  });
  const reports = await p.commands.createJobs(
    Array.from({ length: 12 }, (_, i) => job('report.build', 'default', { report: i }, later)),
  );
  await p.commands.createJobs([0, 1].map((i) => job('email.send', 'io', { to: `u${i}@example.com` }, later)));
  const worker = p.worker();
  worker.handle('flaky.task', (_payload, ctx) => {
    if (ctx.attempt === 1) throw new TransientError('upstream answered 503');
  });
  worker.handle('doomed.task', () => {
    throw new PermanentError('invalid region "mars"');
  });
  await worker.start();
  const [flaky, doomed] = await p.commands.createJobs([
    job('flaky.task', 'critical', { region: 'eu', items: [1, 2, 3] }),
    job('doomed.task', 'critical', { region: 'mars' }),
  ]);
  const state = async (id: string) => (await p.commands.getJob(id)).state;
  await eventually('the flaky job to succeed and the doomed one to fail', async () => {
    return (await state(flaky!.job.id)) === 'SUCCEEDED' && (await state(doomed!.job.id)) === 'FAILED';
  });
  return { reports: reports.map((r) => r.job.id), flaky: flaky!.job.id, doomed: doomed!.job.id };
}

/**
 * Goes to a console address inside the app, as a link does (the router follows history), not by
 * loading the document again: a reload would abort the page's requests still in flight (the
 * overview's, a live refresh), which the test counts as failed requests.
 */
async function visit(page: Page, path: string): Promise<void> {
  // A string: the tests' type-check has no DOM library.
  await page.evaluate(
    `history.pushState(null, '', ${JSON.stringify(path)}); dispatchEvent(new PopStateEvent('popstate'))`,
  );
}

/** The every-tenant key searches one tenant at a time: picks acme in the header. */
async function pickAcme(page: Page) {
  await page.locator('#tenant').fill('acme');
  await page.getByRole('button', { name: 'Show' }).click();
}

/** The attribute an element has; the tests' type-check has no DOM library. */
type Attributed = { getAttribute(name: string): string | null };

/** The ids of the jobs the table shows, in order (each row's link is labelled `job <id>`); read in one go. */
const rowIds = (page: Page): Promise<string[]> =>
  page
    .getByRole('link', { name: /^job / })
    .evaluateAll((links: Attributed[]) => links.map((l) => (l.getAttribute('aria-label') ?? '').slice(4)));

async function apiJob(p: Pipeline, id: string): Promise<{ state: string; due_at: string }> {
  const res = await fetch(`${p.apiUrl}/v1/jobs/${id}`, { headers: { authorization: `Bearer ${p.apiKey}` } });
  return (await res.json()) as { state: string; due_at: string };
}

async function checkA11y(page: Page, name: string, width: Width) {
  await screenshots()(page, name, width);
  expect(await seriousA11yViolations(page)).toEqual([]);
}

/** Finds jobs through the form, pages through them five at a time, and shows a refused filter. */
async function searchAndPage(page: Page, p: Pipeline, reports: readonly string[]) {
  await visit(page, `/console/jobs`);
  await page.getByRole('status').filter({ hasText: 'one tenant at a time' }).waitFor();
  await pickAcme(page);
  await page.getByLabel('State').selectOption('SCHEDULED');
  await page.getByLabel('Type').fill('report.build');
  await page.getByRole('button', { name: 'Search' }).click();
  await poll(() => rowIds(page)).toHaveLength(12);
  expect(new URL(page.url()).searchParams.get('state')).toBe('SCHEDULED');
  expect(new URL(page.url()).searchParams.get('type')).toBe('report.build');
  expect(new Set(await rowIds(page))).toEqual(new Set(reports));

  await page.getByLabel('Per page').selectOption('5');
  const seen: string[][] = [];
  for (const count of [5, 5, 2]) {
    if (seen.length > 0) await page.getByRole('button', { name: 'Next page' }).click();
    await poll(() => page.getByText(`Page ${seen.length + 1}`).count()).toBe(1);
    await poll(() => rowIds(page)).not.toEqual(seen.at(-1) ?? []);
    await poll(() => page.locator('section[aria-busy="true"]').count()).toBe(0);
    expect(await rowIds(page)).toHaveLength(count);
    seen.push(await rowIds(page));
  }
  expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
  expect(new Set(seen.flat())).toEqual(new Set(reports));
  await page.getByRole('button', { name: 'Previous page' }).click();
  await poll(() => rowIds(page)).toEqual(seen[1]);
  expect(new URL(page.url()).searchParams.get('limit')).toBe('5');

  await page.getByLabel('Schedule id').fill('not-a-uuid');
  await page.getByRole('button', { name: 'Search' }).click();
  await poll(() => page.getByRole('alert').textContent()).toMatch(/VALIDATION.*schedule_id/);
  expect(await page.getByLabel('Schedule id').getAttribute('aria-invalid')).toBe('true');
}

/** With Live on, a job created meanwhile shows up without a reload, and the time of the update. */
async function liveRefresh(page: Page, p: Pipeline) {
  await visit(page, `/console/jobs?type=late.arrival`);
  await page.getByText('No jobs match.').waitFor();
  await page.getByRole('switch', { name: /Live/ }).check();
  expect(new URL(page.url()).searchParams.get('live')).toBe('1');
  const [late] = await p.commands.createJobs([
    { tenant: 'acme', type: 'late.arrival', resource_class: 'io', delay_ms: DAY },
  ]);
  await poll(() => rowIds(page), 15_000).toEqual([late!.job.id]);
  expect(await page.locator('.live [aria-live="polite"]').textContent()).toMatch(/^updated \d\d:\d\d:\d\d$/);
}

test('the jobs pages find jobs by filter, page through them, show a job whole, cancel and reschedule', async () => {
  const ns = await useNamespace('console-jobs');
  const p = await startPipeline(ns);
  const { reports, flaky, doomed } = await seed(p);
  const browser = await launchBrowser();
  onTestFinished(() => browser.close());

  const desk = await consolePage(browser, 'desktop');
  const page = desk.page;
  await logIn(page, p.apiUrl, p.apiKey);
  await searchAndPage(page, p, reports);
  await liveRefresh(page, p);

  // Open a job from the list: its timeline, both attempts (the first failed) and its payload.
  await visit(page, `/console/jobs?type=flaky.task`);
  await page.getByRole('link', { name: `job ${flaky}` }).click();
  await page.getByRole('heading', { name: 'Timeline' }).waitFor();
  const timeline = page.locator('ol.timeline');
  await poll(() => timeline.textContent()).toMatch(/Finished \(SUCCEEDED\)/);
  expect(await timeline.textContent()).toMatch(/dispatch lag \(due → dispatched\): \d/);
  const attempts = page.locator('section', { has: page.getByRole('heading', { name: 'Attempts' }) });
  expect(await attempts.locator('tbody tr').count()).toBe(2);
  expect(await attempts.locator('tbody tr').first().textContent()).toMatch(
    /transient.*upstream answered 503/,
  );
  expect(await page.locator('pre.payload').textContent()).toContain('"region": "eu"');
  await checkA11y(page, 'job', 'desktop');

  // Cancel a waiting job: confirmed in a dialog, CANCELLED on the page and in the API.
  const [toCancel, toMove] = reports;
  await visit(page, `/console/jobs/${toCancel}`);
  await page.getByRole('button', { name: 'Cancel job' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel the job' }).click();
  await page.locator('.facts .badge-cancelled').waitFor();
  expect((await apiJob(p, toCancel!)).state).toBe('CANCELLED');

  // Reschedule another: the new due time shows in its timeline and the API has it.
  await visit(page, `/console/jobs/${toMove}`);
  await page.getByRole('button', { name: 'Reschedule' }).click();
  await page.getByLabel('New due time').fill('2030-01-02T03:04');
  await page.getByRole('dialog').getByRole('button', { name: 'Reschedule' }).click();
  await expect
    .poll(() => timeline.locator('li').nth(1).locator('time').getAttribute('datetime'))
    .toBe('2030-01-02T03:04:00.000Z');
  expect((await apiJob(p, toMove!)).due_at).toBe('2030-01-02T03:04:00.000Z');

  // Run the failed job again: a new job, which links back to the one it replays.
  await visit(page, `/console/jobs/${doomed}`);
  await page.getByRole('link', { name: 'Dead letters of type doomed.task' }).waitFor();
  await page.getByRole('button', { name: 'Run again' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Run again' }).click();
  await page.getByRole('link', { name: 'The job it replays' }).waitFor();
  expect(page.url()).not.toContain(doomed);
  expect(desk.problems).toEqual([]);

  // Both pages at both widths: no serious accessibility violation.
  await visit(page, `/console/jobs?type=report.build,email.send`);
  await poll(() => rowIds(page)).toHaveLength(14);
  await checkA11y(page, 'jobs', 'desktop');
  const phone = await consolePage(browser, 'phone');
  await logIn(phone.page, p.apiUrl, p.apiKey);
  await pickAcme(phone.page);
  await visit(phone.page, `/console/jobs?type=report.build,email.send`);
  await poll(() => rowIds(phone.page)).toHaveLength(14);
  await checkA11y(phone.page, 'jobs', 'phone');
  await visit(phone.page, `/console/jobs/${flaky}`);
  await phone.page.locator('ol.timeline').waitFor();
  await checkA11y(phone.page, 'job', 'phone');
  expect([...desk.problems, ...phone.problems]).toEqual([]);
}, 90_000);
