import { Option, type Command } from 'commander';
import { isoTime, shortTime } from '../format';
import { orgOption, type CommandKit, type OrgOption } from './kit';

/**
 * `admin suppression add`: a ManualSuppression for an organization. `origins` are the ones the console offers
 * (program.ts names them).
 */
export function suppressionCommands(
  program: Command,
  { context, emit, leaf }: CommandKit,
  origins: readonly string[],
): void {
  const suppression = program.command('suppression').description("an organization's suppression list");
  leaf(suppression, 'add', 'suppress an address (ManualSuppression): the API will not send to it')
    .addOption(orgOption())
    .requiredOption('--email <address>', 'the address to suppress')
    .addOption(new Option('--origin <origin>', 'who asked for it').choices(origins).default('Admin'))
    .action(async (options: OrgOption & { email: string; origin: string }) => {
      const result = await context.suppressions.add(options.org, options.email, options.origin);
      emit(options, { ...result, createdAt: isoTime(result.createdAt) }, () =>
        result.added
          ? `${result.emailAddress} suppressed (${result.reason}, origin ${result.origin}).`
          : `${result.emailAddress} was already suppressed (${result.reason}, origin ${result.origin}, since ${shortTime(result.createdAt)}).`,
      );
    });
}
