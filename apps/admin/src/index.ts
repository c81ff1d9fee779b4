/**
 * The console as a command line (`npm run admin -- <group> <command>`): program.ts builds it, commands/ holds one
 * file per group, context.ts wires the use cases (application/) to the services from the environment, replay.ts
 * draws the replay's progress. Exit codes and messages: errors.ts.
 */
export { runAdmin, type RunAdminOptions } from './run';
export { AdminContext, type AdminContextOptions } from './context';
export { buildProgram, type Output } from './program';
export { parseAllowance, parseScopes } from './commands';
export { describeFailure, EXIT, OutcomeError, UsageError } from './errors';
export {
  ensureDemo,
  DEMO_DOMAIN,
  DEMO_ORGANIZATION_NAME,
  type DemoCredentials,
  type DemoOptions,
  type DemoResult,
} from './demoSetup';
export { replayProgressBar } from './replay';
