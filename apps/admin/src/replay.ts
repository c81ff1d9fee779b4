import cliProgress from 'cli-progress';
import { replayView, type ReplayProgress, type ReplayReport } from '@sendline/application';
import { createClickHouse, viewOf, type ClickHouseClient, type ProjectionName } from '@sendline/infra';
import type { AdminContext } from './context';
import { fields } from './format';

/**
 * `admin replay <view>` delegates to `replayView` of '@sendline/application' (application/src/replay/):
 * it rebuilds the view from its topics into a fresh copy, compares it with the live one (count and
 * checksum per organization), and swaps it in only when they agree. Every view of the registry can be replayed
 * (infra/src/views/registry.ts); a ClickHouse view gets a ClickHouse client of its own.
 */

export interface ReplayCommandOptions {
  dryRun?: boolean;
  force?: boolean;
  keepRebuilt?: boolean;
  /** false: no progress bar (commander's --no-progress). */
  progress?: boolean;
}

/**
 * A progress bar of a replay's rebuild, with events/s and time left, on `stream` (a terminal): `update` takes
 * the replay's progress, `stop` ends the bar's line.
 */
export function replayProgressBar(view: string, stream: NodeJS.WritableStream) {
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: `replay ${view} [{bar}] {percentage}% | {value}/{total} events | {speed} events/s | ETA {eta_formatted}`,
      etaBuffer: 100,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update({ read, total, elapsedMs }: ReplayProgress) {
      const speed = elapsedMs > 0 ? Math.round((read / elapsedMs) * 1000) : 0;
      if (!started) {
        bar.start(total, read, { speed });
        started = true;
      } else {
        bar.setTotal(total);
        bar.update(read, { speed });
      }
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

/** Runs the replay; the progress bar goes to stderr. */
export async function replay(
  view: ProjectionName,
  context: AdminContext,
  options: ReplayCommandOptions,
): Promise<ReplayReport> {
  let clickhouse: ClickHouseClient | undefined;
  const bar = options.progress === false ? undefined : replayProgressBar(view, process.stderr);
  try {
    if (viewOf(view).store === 'clickhouse') clickhouse = createClickHouse(context.addresses.clickhouseUrl);
    return await replayView(view, {
      store: context.eventStore,
      redis: context.redisClient,
      ...(clickhouse ? { clickhouse, database: context.addresses.clickhouseDatabase } : {}),
      dryRun: options.dryRun === true,
      force: options.force === true,
      keepRebuilt: options.keepRebuilt === true,
      ...(bar ? { onProgress: (progress: ReplayProgress) => bar.update(progress) } : {}),
    });
  } finally {
    bar?.stop();
    await clickhouse?.close();
  }
}

export function replayText(report: ReplayReport): string {
  const lines = [
    report.summary,
    '',
    fields([
      ['view', report.view],
      ['topics', report.topics.join(', ')],
      ['events', `${report.events} (+${report.caughtUp} caught up, +${report.afterSwap} after the swap)`],
      ['speed', `${report.eventsPerSecond} events/s`],
      ['organizations', `live ${report.organizations.live}, rebuilt ${report.organizations.rebuilt}`],
      ['equal', report.equal ? 'yes' : `no (${report.differenceCount} organizations differ)`],
      ['swapped', report.swapped ? 'yes' : 'no'],
      ...(report.kept ? [['kept', report.kept] as const] : []),
    ]),
  ];
  for (const difference of report.differences) {
    const side = (print: typeof difference.live) =>
      print ? `${print.count} entries, checksum ${print.checksum}` : 'absent';
    lines.push(`  ${difference.organizationId}: live ${side(difference.live)}; rebuilt ${side(difference.rebuilt)}`);
  }
  return lines.join('\n');
}
