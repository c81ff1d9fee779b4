import { Argument, type Command } from 'commander';
import { EXIT, OutcomeError } from '../errors';
import { PROJECTIONS, type ProjectionName } from '@sendline/infra';
import { replay, replayText, type ReplayCommandOptions } from '../replay';
import type { CommandKit, JsonOption } from './kit';

/** `admin replay <view>`: rebuild a view from its topics, compare, swap (the work is in ../replay.ts). */
export function replayCommand(program: Command, { context, emit }: CommandKit): void {
  program
    .command('replay')
    .description(
      'rebuild a view from its Kafka topics into a fresh copy, compare it with the live view (count and checksum\n' +
        'per organization) and swap it in only when they agree; otherwise report the differences (exit 3)',
    )
    .addArgument(new Argument('<view>', 'the view to rebuild').choices(PROJECTIONS))
    .option('--dry-run', 'build and compare only; never swap')
    .option('--force', 'swap the rebuilt view in even when it differs (after reading the differences)')
    .option('--keep-rebuilt', 'keep the rebuilt copy when it is not swapped in')
    .option('--no-progress', 'no progress bar on stderr')
    .option('--json', 'print the report as JSON')
    .action(async (view: ProjectionName, options: JsonOption & ReplayCommandOptions) => {
      const report = await replay(view, context, options);
      emit(options, report, () => replayText(report));
      if (!report.equal && !report.swapped) {
        throw new OutcomeError(
          `the rebuilt ${view} view differs from the live one in ${report.differenceCount} organizations; the live view was left as it was`,
          EXIT.differs,
        );
      }
    });
}
