import { defineConfig } from 'vitest/config';

// Two projects: `unit` needs no server (domain rules, the client against a fake fetch,
// HTTP mapping with inject); `integration` runs against the real services that
// `npm test` starts (Kafka, the schema registry, ClickHouse, Redis, the test SMTP server).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: [
            'domain/test/**/*.test.ts',
            'client/test/**/*.test.ts',
            'apps/*/test/unit/**/*.test.ts',
            'infra/test/unit/**/*.test.ts',
            'schemas/test/**/*.test.ts',
          ],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
