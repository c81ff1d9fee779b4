import { configDefaults, defineConfig } from 'vitest/config';

// Three projects (the third, `chaos`, is below): `unit` needs no server (domain rules, the client against a fake fetch,
// HTTP mapping with inject); `integration` runs against the real services that
// `npm test` starts (Kafka, the schema registry, ClickHouse, Redis, the test SMTP server).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          // A timeout only stops a test that hangs: no unit test's pass may depend on how fast the machine is (on two
          // cores shared with the integration suite, CPU-bound tests run several times slower than alone).
          testTimeout: 60_000,
          include: [
            'domain/test/**/*.test.ts',
            'client/test/**/*.test.ts',
            'apps/*/test/unit/**/*.test.ts',
            'infra/test/unit/**/*.test.ts',
            'application/test/**/*.test.ts',
            'schemas/test/**/*.test.ts',
          ],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/chaos/**'],
          // What every file shares is set up once, before files run side by side (the system organization).
          globalSetup: ['test/support/globalSetup.ts'],
          // Hang guards, not speed limits: each wait in a test has its own bound, and a test of several (a projector
          // started, stopped and started again) took 39 s beside one other file and over 60 s beside three.
          testTimeout: 180_000,
          hookTimeout: 180_000,
          // Files run in parallel (npm test: two at a time): each has its own topics, groups and organizations.
          // They share their worker's modules (no file changes a module's state or the environment): loading the
          // workspaces again for each file was some 90 s of the suite's CPU.
          isolate: false,
        },
      },
      {
        // Fault tests (issue 11): each kills a process of its own private services with SIGKILL under a
        // bounded loopback load and counts what was lost and what was done twice. `npm run test:chaos`.
        test: {
          name: 'chaos',
          include: ['test/chaos/**/*.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
