import { ALLOWED_ORIGINS } from '@sendline/domain';
import { Command } from 'commander';
import {
  domainCommands,
  keyCommands,
  memberCommands,
  organizationCommands,
  replayCommand,
  suppressionCommands,
  systemCommands,
  type CommandKit,
  type JsonOption,
} from './commands';
import type { AdminContext } from './context';

/**
 * The console as a command line: `admin <group> <command> [options]`. Every command prints a table
 * by default and JSON with --json; organizations are named by id (--org <id>).
 */

export interface Output {
  write(text: string): void;
}

// ── the program: one root command, its groups' commands added from commands/ ──

/** The `admin` program on `context`: results to `output`, refusals and usage errors to `errors`. */
export function buildProgram(context: AdminContext, output: Output, errors: Output): Command {
  const print = (text: string) => output.write(text.endsWith('\n') ? text : `${text}\n`);
  const emit = (options: JsonOption, json: unknown, text: () => string) =>
    print(options.json ? JSON.stringify(json, null, 2) : text());

  const program = new Command('admin')
    .description(
      'The Sendline console: organizations, members, domains, API keys, allowance, suppressions, view replays.\n' +
        'Organizations are named by id (--org <id>). Every command prints a table, or JSON with --json.\n' +
        'Exit codes: 0 done, 1 refused (bad input or a rule), 2 a service failed or is unreachable,\n' +
        '3 a replayed view differs from the live one (not swapped).',
    )
    .exitOverride()
    .configureOutput({
      writeOut: (text) => output.write(text),
      writeErr: (text) => errors.write(text),
      outputError: (text, write) => write(`admin: ${text.trim().replace(/^error: /, '')} (see --help)\n`),
    })
    .showSuggestionAfterError(true);

  const leaf = (parent: Command, name: string, description: string) =>
    parent.command(name).description(description).option('--json', 'print JSON instead of a table');
  const kit: CommandKit = { context, emit, leaf };

  organizationCommands(program, kit);
  memberCommands(program, kit);
  domainCommands(program, kit);
  keyCommands(program, kit);
  suppressionCommands(program, kit, ALLOWED_ORIGINS.ManualSuppression);
  replayCommand(program, kit);
  systemCommands(program, kit);
  return program;
}
