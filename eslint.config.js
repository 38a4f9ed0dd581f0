// Package boundaries and async hygiene are enforced here, not by convention.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';

export default tseslint.config(
  {
    ignores: ['**/dist/**', '**/node_modules/**', '.kairos/**', '.cache/**', 'bench/results/**', '.build/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', '*.mjs', 'scripts/*.mjs', 'vitest.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { 'import-x': importX },
    // import-x's own resolver (unrs): it reads package `exports`, which the legacy `node` one cannot.
    settings: { 'import-x/resolver-next': [createNodeResolver()] },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // KafkaJS hands callbacks closures (resolveOffset, heartbeat…) that are meant to be destructured.
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true },
      ],
      'import-x/no-cycle': ['error', { maxDepth: 10 }],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@kairos/*/*'],
              message: 'Import a package through its public entry point (@kairos/<name>), never a deep path.',
            },
            {
              group: ['**/libs/*/src/**', '**/apps/*/src/**', '../../libs/**', '../../apps/**'],
              message: 'Cross-package imports go through the package name, not a relative path.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['libs/core/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@kairos/*'], message: 'libs/core imports nothing of ours.' },
            { group: ['node:*', 'kafkajs', 'ioredis', 'pg', 'pino'], message: 'libs/core does no I/O.' },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
    },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  { files: ['**/*.js', '**/*.mjs'], rules: { 'no-undef': 'off' } },
);
