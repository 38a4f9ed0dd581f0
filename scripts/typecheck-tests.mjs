// Type-checks every test folder (each has its own tsconfig.json, outside the build graph).
import { execFileSync } from 'node:child_process';
import { globSync } from 'node:fs';

const configs = globSync('{test,libs/*/test,apps/*/test,ops/test}/tsconfig.json');
for (const config of configs) {
  execFileSync('tsc', ['-p', config], { stdio: 'inherit' });
}
console.log(`type-checked ${configs.length} test project(s)`);
