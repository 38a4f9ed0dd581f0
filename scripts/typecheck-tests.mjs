// Type-checks every test folder and the console (each has its own tsconfig.json, outside the
// build graph: the console is bundled by Vite for the browser, not compiled by tsc -b).
import { execFileSync } from 'node:child_process';
import { globSync } from 'node:fs';

const configs = globSync('{test,libs/*/test,apps/*/test,ops/test,bench/test,apps/console}/tsconfig.json');
for (const config of configs) {
  execFileSync('tsc', ['-p', config], { stdio: 'inherit' });
}
console.log(`type-checked ${configs.length} test project(s)`);
