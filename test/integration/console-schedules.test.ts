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
import { startPipeline, type Pipeline } from '../support/pipeline.js';
import { api, createSchedule, type RunView, type ScheduleView } from '../support/schedules.js';

// Daily at 01:30 and 02:30 New York: 02:30 falls in the spring-forward gap (2027-03-14) and 01:30
// in the fall-back overlap (2027-11-07), where `both` runs the repeated hour twice.
const DST_SPEC = {
  tenant: 'acme',
  cron: '30 1,2 * * *',
  time_zone: 'America/New_York',
  job: { type: 'report.nightly', resource_class: 'default' },
  dst: { overlap: 'both' },
};
// Daily at 02:30 New York, skipping the time on the spring-forward day: the preview just lacks it.
const SKIP_SPEC = {
  ...DST_SPEC,
  cron: '30 2 * * *',
  job: { type: 'report.skip', resource_class: 'default' },
};
const SLA_SPEC = {
  tenant: 'acme',
  cron: '0 9 * * *',
  time_zone: 'UTC',
  job: { type: 'sync.daily', resource_class: 'io' },
  sla_ms: 900_000,
};

/** Midnight UTC `n` days ago as a datetime-local value (the browser runs in UTC). */
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10) + 'T00:00';

async function openList(page: Page, p: Pipeline): Promise<void> {
  await logIn(page, p.apiUrl, p.apiKey);
  await page.getByLabel('Tenant', { exact: true }).fill('acme');
  await page.getByRole('button', { name: 'Show' }).click();
  await page.getByRole('link', { name: 'Schedules' }).click();
  await page.getByRole('link', { name: /schedule report\.nightly/ }).waitFor();
}

async function checked(page: Page, name: string, width: Width, problems: string[]): Promise<void> {
  await screenshots()(page, name, width);
  expect(await seriousA11yViolations(page)).toEqual([]);
  expect(problems).toEqual([]);
}

/** Loads `url` once the page's requests are answered (leaving earlier would abort them: a problem). */
async function visit(page: Page, url: string): Promise<void> {
  await expect.poll(() => page.locator('[aria-busy="true"]').count(), { timeout: 15_000 }).toBe(0);
  await page.goto(url);
}

/** Opens the dialog of `button`, runs `fill` in it, confirms with `confirm`. */
async function confirmed(page: Page, button: string, confirm: string, fill?: () => Promise<void>) {
  await page.getByRole('button', { name: button, exact: true }).click();
  await fill?.();
  await page.getByRole('dialog').getByRole('button', { name: confirm }).click();
}

async function dstMarks(page: Page): Promise<void> {
  const preview = async (from: string) => {
    await page.getByLabel('From (date, your time zone)').fill(from);
    await page.getByLabel('How many').fill('6');
    await page.getByRole('button', { name: 'Preview' }).click();
  };
  await preview('2027-03-13');
  await page.getByText('shifted (DST gap): 02:30:00 does not exist that day').waitFor();
  await preview('2027-11-06');
  await page.getByText('repeated hour (DST overlap): the earlier of the two').waitFor();
  await page.getByText('repeated hour (DST overlap): the later of the two').waitFor();
  expect(page.url()).toContain('from=2027-11-06');
}

async function pauseResume(page: Page, p: Pipeline, id: string): Promise<void> {
  const state = async () => (await api<ScheduleView>(p, 'GET', `/v1/schedules/${id}`)).json.state;
  const rules = page.getByRole('region', { name: 'Rules and state' });
  // By keyboard: Enter opens the dialog with the focus in it, Escape leaves it, nothing changed.
  await page.getByRole('button', { name: 'Pause', exact: true }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('dialog', { name: 'Pause this schedule?' }).waitFor();
  expect(await page.locator('dialog[open] :focus').count()).toBe(1);
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'hidden' });
  expect(await state()).toBe('ACTIVE');
  await confirmed(page, 'Pause', 'Pause schedule');
  await rules.getByText('PAUSED', { exact: true }).waitFor();
  expect(await state()).toBe('PAUSED');
  await confirmed(page, 'Resume', 'Resume schedule');
  await rules.getByText('ACTIVE', { exact: true }).waitFor();
  expect(await state()).toBe('ACTIVE');
}

async function triggerAndBackfill(page: Page, p: Pipeline, id: string): Promise<void> {
  const runs = page.getByRole('region', { name: 'Runs' });
  await confirmed(page, 'Trigger now', 'Trigger run');
  await page.getByRole('status').getByText('Run created:').waitFor();
  await runs.getByRole('cell', { name: 'trigger', exact: true }).waitFor();

  // A range that ends before it starts: the API's field error shows in the dialog.
  await confirmed(page, 'Backfill', 'Backfill range', async () => {
    await page.getByLabel('From (inclusive)').fill(daysAgo(1));
    await page.getByLabel('To (exclusive, not in the future)').fill(daysAgo(3));
  });
  await page.getByRole('dialog').getByRole('alert').getByText('must be after from').waitFor();
  // Two days of 01:30 and 02:30: four runs.
  await page.getByLabel('From (inclusive)').fill(daysAgo(3));
  await page.getByLabel('To (exclusive, not in the future)').fill(daysAgo(1));
  await page.getByRole('dialog').getByRole('button', { name: 'Backfill range' }).click();
  await page.getByText('Backfill: 4 requested, 4 created, 0 already backfilled').waitFor();
  await expect
    .poll(() => runs.getByRole('cell', { name: 'backfill', exact: true }).count(), { timeout: 15_000 })
    .toBe(4);
  const listed = (await api<{ runs: RunView[] }>(p, 'GET', `/v1/schedules/${id}/runs`)).json.runs;
  expect(listed.filter((r) => r.occurrence?.kind === 'backfill')).toHaveLength(4);
}

test('schedules pages: list, DST marks in the preview, pause, resume, trigger, backfill and its field error', async () => {
  const ns = await useNamespace('console-schedules');
  const p = await startPipeline(ns);
  const worker = p.worker();
  worker.handle('report.nightly', () => undefined);
  await worker.start();
  const dst = await createSchedule(p, DST_SPEC);
  await createSchedule(p, SLA_SPEC);
  const skip = await createSchedule(p, { ...SKIP_SPEC, dst: { gap: 'skip' } });
  const browser = await launchBrowser();
  onTestFinished(() => browser.close());

  const { page, problems } = await consolePage(browser, 'desktop');
  await openList(page, p);
  const table = page.getByRole('table', { name: 'Schedules' });
  for (const text of ['30 1,2 * * *', 'America/New_York', 'sync.daily', 'io', 'ACTIVE'])
    await table.getByText(text, { exact: true }).first().waitFor();
  await checked(page, 'schedules', 'desktop', problems);

  await page.getByRole('link', { name: /schedule report\.nightly/ }).click();
  await page.getByRole('heading', { name: 'Schedule report.nightly' }).waitFor();
  expect(await page.getByRole('region', { name: 'Health and misfires' }).textContent()).toContain('SLAnone');
  await dstMarks(page);
  await pauseResume(page, p, dst.id);
  await triggerAndBackfill(page, p, dst.id);
  await checked(page, 'schedule', 'desktop', problems);

  // The SLA schedule's health and its dead-man's switch.
  await visit(page, `${p.apiUrl}/console/schedules?state=ACTIVE`);
  await page.getByRole('link', { name: /schedule sync\.daily/ }).click();
  await page.getByText('succeed within 15.0 min of the fire time').waitFor();
  // The preview of a skipping schedule, its range in the URL: the day after the gap is marked.
  await visit(page, `${p.apiUrl}/console/schedules/${skip.id}?from=2027-03-13&count=3`);
  await page.getByText('clocks changed since the previous time (UTC−05:00 → UTC−04:00)').waitFor();
  await page.getByText('skipped (DST gap): with dst.gap "skip"', { exact: false }).waitFor();
  const day = (d: string) => page.getByRole('cell', { name: new RegExp(`^2027-03-${d} 02:30:00`) }).count();
  expect([await day('13'), await day('14'), await day('15')]).toEqual([1, 0, 1]);
  expect(problems).toEqual([]);

  const phone = await consolePage(browser, 'phone');
  await openList(phone.page, p);
  await checked(phone.page, 'schedules', 'phone', phone.problems);
  await visit(phone.page, `${p.apiUrl}/console/schedules/${dst.id}?from=2027-11-06&count=6`);
  await phone.page.getByText('repeated hour (DST overlap): the later of the two').waitFor();
  await checked(phone.page, 'schedule', 'phone', phone.problems);
});
