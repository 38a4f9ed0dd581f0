import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { checkPrerequisites } from '@kairos/ops';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/**
 * KAIROS_CHROMIUM, else Debian's Chromium — installed here when missing, as the stack's other
 * prerequisites are (root with apt-get), else a clear error naming the package.
 */
export function chromiumPath(): string {
  const path = checkPrerequisites(['console-browser'], (line) => console.log(`[browser] ${line}`)).chromium;
  if (!path) throw new Error('no chromium found');
  return path;
}

export const WIDTHS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } } as const;
export type Width = keyof typeof WIDTHS;

/** A real headless Chromium; the caller closes it. */
export async function launchBrowser(): Promise<Browser> {
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox'] });
}

/**
 * A page that records every console error, failed request and uncaught exception: the console
 * must run without any (`problems` is asserted empty by the tests). Expected API refusals (a
 * 4xx a test provokes) are listed in `expectStatuses` and not counted.
 */
export async function consolePage(
  browser: Browser,
  width: Width = 'desktop',
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: WIDTHS[width], locale: 'en-GB', timezoneId: 'UTC' });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    // A refused fetch is also logged by Chromium as a console error; the test decides on those.
    if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) =>
    problems.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`),
  );
  return { context, page, problems };
}

/** Logs in through the login page with `key`; resolves once the overview shows. */
export async function logIn(page: Page, apiUrl: string, key: string): Promise<void> {
  await page.goto(`${apiUrl}/console/`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

const axeSource = (): string => (createRequire(import.meta.url)('axe-core') as { source: string }).source;

export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: number;
}

/**
 * axe-core's WCAG 2.1 A/AA rules on the page as it is now; returns the serious and critical
 * violations (the tests assert none).
 */
export async function seriousA11yViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource());
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (o: unknown) => Promise<unknown> } }).axe;
    return axe.run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
  });
  const violations = (
    result as { violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[] }
  ).violations;
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length }));
}

/**
 * Where screenshots go: KAIROS_SCREENSHOTS_DIR (the README's are made with `docs/console`), else
 * nowhere. Returns a function that saves the page as `<name>-<width>.png` there.
 */
export function screenshots(): (page: Page, name: string, width: Width) => Promise<void> {
  const dir = process.env.KAIROS_SCREENSHOTS_DIR;
  if (!dir) return () => Promise.resolve();
  const abs = resolve(import.meta.dirname, '..', '..', dir);
  mkdirSync(abs, { recursive: true });
  return async (page, name, width) => {
    await page.screenshot({ path: join(abs, `${name}-${width}.png`), fullPage: true });
  };
}
