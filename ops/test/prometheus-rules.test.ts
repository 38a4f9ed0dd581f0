import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { expect, test } from 'vitest';
import { checkPrerequisites } from '../src/prereqs.js';

// The alert rules are code: promtool (Debian's `prometheus` package) checks them and runs their
// unit tests, so a rule that cannot parse or does not fire as written fails the suite.
const DIR = resolve(import.meta.dirname, '../prometheus');

const promtool = (...args: string[]) =>
  execFileSync('promtool', args, { cwd: DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

test('promtool checks ops/prometheus/alerts.yml and its rule tests pass', () => {
  // Found, or installed as the stack's tools are (root with apt-get), or a clear error naming it.
  checkPrerequisites(['alert-rules'], () => undefined);
  expect(promtool('check', 'rules', 'alerts.yml')).toMatch(/SUCCESS: \d+ rules found/);
  expect(promtool('test', 'rules', 'alerts.test.yml')).toMatch(/SUCCESS/);
  // 14 rules' unit tests take seconds on a loaded CI machine (CI run 3 went past the 5 s default).
}, 60_000);
