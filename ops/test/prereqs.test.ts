import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { checkPrerequisites, MissingPrerequisite } from '../src/prereqs.js';

const empty = mkdtempSync(join(tmpdir(), 'kairos-no-tools-'));
afterAll(() => rmSync(empty, { recursive: true, force: true }));
const bare = { PATH: empty, KAIROS_NO_INSTALL: '1' };

test('every missing tool is listed at once, each with its Debian package', () => {
  let err: unknown;
  try {
    checkPrerequisites(['redis', 'kafka'], () => undefined, bare);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(MissingPrerequisite);
  const msg = (err as Error).message;
  expect(msg).toMatch(/missing prerequisites \(4\)/);
  for (const line of [
    'java 17+: apt-get install openjdk-17-jre-headless',
    'mvn',
    'redis-server 7: apt-get install redis-server',
    'openssl',
  ])
    expect(msg).toContain(line);
});

test('services that already answer need nothing', () => {
  expect(checkPrerequisites([], () => undefined, bare)).toMatchObject({ java: '', redisServer: '' });
});
