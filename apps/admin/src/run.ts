import { CommanderError } from 'commander';
import { AdminContext, type AdminContextOptions } from './context';
import { describeFailure, EXIT } from './errors';
import { buildProgram, type Output } from './program';

export interface RunAdminOptions extends AdminContextOptions {
  output?: Output;
  errors?: Output;
}

/**
 * Runs one console command (argv without `node` and the script) and returns its exit code:
 * 0 done, 1 refused (bad input or a rule, with a one-line message), 2 a service failed.
 * Connections are closed before it returns.
 */
export async function runAdmin(argv: readonly string[], options: RunAdminOptions = {}): Promise<number> {
  const output = options.output ?? { write: (text: string) => void process.stdout.write(text) };
  const errors = options.errors ?? { write: (text: string) => void process.stderr.write(text) };
  const context = new AdminContext(options);
  const program = buildProgram(context, output, errors);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here with 0; commander printed its own message for a usage error.
      return error.exitCode === 0 ? EXIT.ok : EXIT.refused;
    }
    const { message, exitCode } = describeFailure(error, context.addresses.redisUrl);
    errors.write(`admin: ${message}\n`);
    return exitCode;
  } finally {
    await context.close();
  }
}
