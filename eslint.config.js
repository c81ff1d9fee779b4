import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import appBoundaries from './infra/local/eslint/appBoundaries.js';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '.local/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Tests read JSON answers whose shape is what they assert.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // domain/ is pure: no I/O, no framework, no clock.
    files: ['domain/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            'node:*',
            'fs',
            'net',
            'http',
            'kafkajs',
            'ioredis',
            'fastify',
            'nodemailer',
            '@clickhouse/*',
            '@sendline/infra',
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'domain/ takes time from command metadata',
        },
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: 'domain/ takes time from command metadata',
        },
        {
          selector: "CallExpression[callee.object.name='Math'][callee.property.name='random']",
          message: 'domain/ takes randomness from its caller',
        },
      ],
    },
  },
  {
    // application/ is use cases: its callers read the configuration and pass it in, and no HTTP reaches it.
    files: ['application/src/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'application/ takes its configuration from its caller' },
      ],
      'no-restricted-imports': [
        'error',
        { patterns: ['fastify', 'node:http', 'http', '@sendline/api', '@sendline/admin'] },
      ],
    },
  },
  {
    // The event store knows no view: a view's positions come in through the interface it defines
    // (infra/src/kafka/eventStore/positions.ts), passed by the caller.
    files: ['infra/src/kafka/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/views', '**/views/**'], message: 'infra/src/kafka knows no view' }] },
      ],
    },
  },
  {
    // No app imports another app (apps/<a> never reaches '@sendline/<b>' or apps/<b>/): what they share belongs in
    // infra/ or application/. The rule: infra/local/eslint/appBoundaries.js.
    files: ['apps/**/*.ts', 'apps/**/*.tsx'],
    plugins: { sendline: appBoundaries },
    rules: { 'sendline/no-cross-app-imports': 'error' },
  },
);
