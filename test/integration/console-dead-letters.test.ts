import { PermanentError } from '@kairos/worker-sdk';
import type { Browser, Page } from 'playwright-core';
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

// The dead-letter pages in a real Chromium against the real stack: dead letters made by a worker
// whose handler refuses for good, found by filter, replayed after a dry run and a confirmation;
// the replay's progress reaches DONE with its audit trail; a bad filter starts nothing.

async function apiGet<T>(p: Pipeline, path: string): Promise<T> {
  const res = await fetch(`${p.apiUrl}${path}`, { headers: { authorization: `Bearer ${p.apiKey}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

interface JobView {
  readonly id: string;
  readonly state: string;
  readonly replay_of: string | null;
}

/** n jobs of a type made dead letters for real: the worker's handler refuses them for good. */
async function deadLetters(p: Pipeline, type: string, resource_class: string, n: number): Promise<string[]> {
  const due = new Date().toISOString();
  const created = await p.commands.createJobs(
    Array.from({ length: n }, (_, i) => ({
      tenant: 'acme',
      type,
      resource_class,
      payload: { n: i },
      due_at: due,
    })),
  );
  const ids = created.map((c) => c.job.id);
  await eventually(`${n} dead letters of ${type}`, async () => {
    const page = await apiGet<{ dead_letters: JobView[] }>(p, `/v1/dead-letters?tenant=acme&type=${type}`);
    return page.dead_letters.length === n;
  });
  return ids;
}

/** `dlq.mail` and `dlq.sms` fail until `fixed.now`; `dlq.slow` always does. */
async function startWorker(p: Pipeline, fixed: { now: boolean }): Promise<void> {
  const worker = p.worker({ resourceClasses: ['default', 'io'] });
  const refuse = () => {
    throw new PermanentError('no such recipient');
  };
  const untilFixed = () => {
    if (!fixed.now) refuse();
  };
  worker.handle('dlq.mail', untilFixed);
  worker.handle('dlq.sms', untilFixed);
  worker.handle('dlq.slow', refuse);
  await worker.start();
}

/** Logs in and picks tenant acme (the pipeline's key acts for every tenant). */
async function open(browser: Browser, p: Pipeline, width: Width) {
  const { page, problems } = await consolePage(browser, width);
  await logIn(page, p.apiUrl, p.apiKey);
  await page.getByLabel('Tenant').fill('acme');
  await page.getByRole('button', { name: 'Show' }).click();
  // Through the page's own link: a new page load would abort the overview's requests.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Dead letters' }).click();
  return { page, problems };
}

const jobLinks = (page: Page) =>
  page.getByRole('table', { name: 'Dead letters, newest first' }).getByRole('link');

type Shot = ReturnType<typeof screenshots>;

/** The dry run: total, groups, a sample linked to the jobs; nothing started. */
async function dryRun(page: Page, p: Pipeline, mail: readonly string[], shot: Shot): Promise<void> {
  await page.getByLabel('Rate (jobs per second, 1–1,000)').fill('5');
  await page.getByRole('button', { name: 'Dry run' }).click();
  await page.getByRole('heading', { name: 'Dry run: 3 dead letters would be replayed' }).waitFor();
  const groups = page.getByRole('table', { name: 'Dead letters to replay by type, class and tenant' });
  expect(await groups.getByRole('row').allInnerTexts()).toEqual([
    expect.stringMatching(/Type\s+Class\s+Tenant\s+Dead letters/),
    expect.stringMatching(/dlq\.mail\s+io\s+acme\s+3/),
  ]);
  const sampleLinks = await page.getByRole('link', { name: /^sample job / }).all();
  const sample = await Promise.all(
    sampleLinks.map(async (a) => (await a.getAttribute('href'))?.split('/').pop()),
  );
  expect(sample.sort()).toEqual([...mail].sort());
  expect((await apiGet<{ replays: unknown[] }>(p, '/v1/replays')).replays).toEqual([]);
  expect(await seriousA11yViolations(page)).toEqual([]);
  await shot(page, 'dead-letters', 'desktop');
}

/** Confirm: the dialog says how many at what rate; the replay's page follows it to DONE. */
async function replayToDone(page: Page, shot: Shot): Promise<string> {
  await page.getByRole('button', { name: 'Replay 3 dead letters' }).click();
  const dialog = page.getByRole('dialog', { name: 'Replay 3 dead letters?' });
  expect(await dialog.innerText()).toMatch(/3 jobs will be re-created as new jobs .* at 5 per second/);
  await dialog.getByRole('button', { name: 'Replay', exact: true }).click();
  await page.waitForURL(/\/console\/replays\/[0-9a-f-]{36}$/);
  const replayId = page.url().split('/').pop() ?? '';
  const progress = page.getByRole('progressbar', { name: 'Replay progress' });
  await expect.poll(() => page.locator('.replay-status').innerText(), { timeout: 20_000 }).toMatch(/^DONE/);
  expect(await progress.getAttribute('value')).toBe('3');
  expect(await progress.getAttribute('max')).toBe('3');
  await expect.poll(() => page.getByText('3 of 3 replayed (100 %)').count()).toBe(1);
  const audit = page.getByRole('table', { name: 'Audit trail' });
  const actions = await audit.locator('tbody tr td:nth-child(2)').allInnerTexts();
  expect(actions).toEqual(['created', 'done']);
  expect(await audit.locator('tbody tr').first().innerText()).toMatch(/k_\S+\s+.*selected: 3/);
  expect(await page.getByRole('button', { name: 'Cancel replay' }).count()).toBe(0);
  expect(await seriousA11yViolations(page)).toEqual([]);
  await shot(page, 'replay', 'desktop');

  return replayId;
}

/** A bad filter (from a link): the API's field error by the list and by the dry run; nothing starts. */
async function badFilter(page: Page, p: Pipeline): Promise<void> {
  await page.goto(`${p.apiUrl}/console/dead-letters?created_after=yesterday`);
  await expect.poll(() => page.getByRole('alert').first().innerText()).toMatch(/created_after/);
  await page.getByRole('button', { name: 'Dry run' }).click();
  await expect.poll(() => page.getByRole('alert').count()).toBe(2);
  expect(await page.getByRole('alert').nth(1).innerText()).toMatch(/VALIDATION[\s\S]*created_after/);
  expect(await page.getByRole('button', { name: /^Replay \d/ }).count()).toBe(0);
  expect((await apiGet<{ replays: unknown[] }>(p, '/v1/replays')).replays).toHaveLength(1);
}

/** Cancel: 10 dead letters at 1 a second, cancelled from the replay's page; what was sent stays. */
async function cancelSlowReplay(page: Page, p: Pipeline): Promise<void> {
  await deadLetters(p, 'dlq.slow', 'default', 10);
  await page.getByRole('button', { name: 'Clear' }).click();
  await page.getByLabel('Type').fill('dlq.slow');
  await page.getByRole('button', { name: 'Search' }).click();
  await expect.poll(() => jobLinks(page).count()).toBe(10);
  await page.getByLabel('Rate (jobs per second, 1–1,000)').fill('1');
  await page.getByRole('button', { name: 'Dry run' }).click();
  await page.getByRole('button', { name: 'Replay 10 dead letters' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Replay', exact: true }).click();
  await page.getByRole('button', { name: 'Cancel replay' }).click();
  await page
    .getByRole('dialog', { name: 'Cancel this replay?' })
    .getByRole('button', { name: 'Cancel the replay' })
    .click();
  await expect
    .poll(() => page.locator('.replay-status').innerText())
    .toMatch(/^CANCELLED\s+\d+ of 10 replayed/);
  await expect
    .poll(() =>
      page.getByRole('table', { name: 'Audit trail' }).locator('tbody tr td:nth-child(2)').allInnerTexts(),
    )
    .toEqual(['created', 'cancelled']);
}

/** The phone width: the list (with its recent replays) and the replay page. */
async function phoneWidth(browser: Browser, p: Pipeline, replayId: string, shot: Shot): Promise<void> {
  const phone = await open(browser, p, 'phone');
  await jobLinks(phone.page).first().waitFor();
  await phone.page.getByRole('table', { name: 'Recent replays' }).getByRole('link').nth(1).waitFor();
  expect(await seriousA11yViolations(phone.page)).toEqual([]);
  await shot(phone.page, 'dead-letters', 'phone');
  await phone.page.getByRole('link', { name: `replay ${replayId}` }).click();
  await phone.page.getByRole('table', { name: 'Audit trail' }).waitFor();
  expect(await seriousA11yViolations(phone.page)).toEqual([]);
  await shot(phone.page, 'replay', 'phone');
  expect(phone.problems).toEqual([]);
}

test('dead letters: listed, filtered, replayed after a dry run and a confirmation, followed to DONE with its audit trail, a slow one cancelled; a bad filter starts nothing', async () => {
  const ns = await useNamespace('console-dlq');
  const p = await startPipeline(ns);
  const fixed = { now: false };
  await startWorker(p, fixed);
  const mail = await deadLetters(p, 'dlq.mail', 'io', 3);
  await deadLetters(p, 'dlq.sms', 'default', 2);
  fixed.now = true; // the handler is fixed: the replayed jobs succeed
  const browser = await launchBrowser();
  onTestFinished(() => browser.close());
  const shot = screenshots();

  const { page, problems } = await open(browser, p, 'desktop');
  await expect.poll(() => jobLinks(page).count()).toBe(5);

  // Filter by type: the URL keeps it, the list narrows.
  await page.getByLabel('Type').fill('dlq.mail');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForURL(/[?&]type=dlq\.mail/);
  await expect.poll(() => jobLinks(page).count()).toBe(3);

  await dryRun(page, p, mail, shot);
  const replayId = await replayToDone(page, shot);

  // The replayed jobs exist, one per original, replay_of set, and the fixed handler ran them.
  await eventually('the 3 copies to succeed', async () => {
    const { jobs } = await apiGet<{ jobs: JobView[] }>(p, '/v1/jobs?tenant=acme&type=dlq.mail');
    const copies = jobs.filter((j) => j.replay_of !== null);
    expect(copies.map((j) => j.replay_of).sort()).toEqual([...mail].sort());
    return copies.every((j) => j.state === 'SUCCEEDED');
  });

  await badFilter(page, p);
  await cancelSlowReplay(page, p);
  expect(problems).toEqual([]);
  await phoneWidth(browser, p, replayId, shot);
}, 90_000);
