import { expect, onTestFinished, test } from 'vitest';
import { consolePage, launchBrowser, logIn, screenshots, seriousA11yViolations } from '../support/browser.js';
import { useNamespace } from '../support/namespace.js';
import { startPipeline } from '../support/pipeline.js';

test('the console refuses a wrong key, logs in with a good one (kept in the tab only) and logs out', async () => {
  const ns = await useNamespace('console-login');
  const p = await startPipeline(ns);
  const browser = await launchBrowser();
  onTestFinished(() => browser.close());
  const shot = screenshots();

  for (const width of ['desktop', 'phone'] as const) {
    const { page, problems } = await consolePage(browser, width);
    await page.goto(`${p.apiUrl}/console/`);
    await shot(page, 'login', width);
    expect(await seriousA11yViolations(page)).toEqual([]);

    await page.getByLabel('API key').fill('kairos_not_a_key');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/UNAUTHENTICATED/);

    await logIn(page, p.apiUrl, p.apiKey);
    expect(await page.evaluate(() => Object.keys(localStorage))).toEqual([]);
    expect(await page.evaluate(() => sessionStorage.getItem('kairos.apiKey'))).toBe(p.apiKey);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('kairos.apiKey'))).toBeNull();
    expect(problems).toEqual([]);
  }
});
