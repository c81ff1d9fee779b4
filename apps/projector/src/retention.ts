import {
  dropExpiredPartitions,
  MESSAGE_RETENTION_DAYS,
  type ClickHouseClient,
  type DroppedPartition,
} from '@sendline/infra';
import type { Logger } from 'pino';

export interface RetentionSweepOptions {
  client: ClickHouseClient;
  database: string;
  /** The clock (epoch ms); tests move it. */
  now?: () => number;
  retentionDays?: number;
  /** How often the sweep runs (default hourly); it also runs at start. */
  intervalMs?: number;
  logger?: Logger;
  onSweep?: (dropped: DroppedPartition[]) => void;
}

/**
 * Runs the activity store's retention sweep (drop day partitions older than 30
 * days) at start and then on a schedule. A failed sweep is logged and tried again
 * at the next tick: dropping a partition late is harmless.
 */
export class RetentionSweep {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<DroppedPartition[]> | undefined;

  constructor(private readonly options: RetentionSweepOptions) {}

  /** Sweeps now, then every `intervalMs`. Resolves after the first sweep. */
  async start(): Promise<DroppedPartition[]> {
    const first = await this.sweep();
    this.timer = setInterval(() => void this.sweep(), this.options.intervalMs ?? 60 * 60 * 1000);
    this.timer.unref();
    return first;
  }

  /** One sweep (never two at once); failures are logged and answer []. */
  sweep(): Promise<DroppedPartition[]> {
    this.running ??= (async () => {
      const now = (this.options.now ?? Date.now)();
      try {
        const dropped = await dropExpiredPartitions(
          this.options.client,
          this.options.database,
          now,
          this.options.retentionDays ?? MESSAGE_RETENTION_DAYS,
        );
        if (dropped.length > 0) this.options.logger?.info({ dropped }, 'retention sweep dropped partitions');
        this.options.onSweep?.(dropped);
        return dropped;
      } catch (error) {
        this.options.logger?.error({ err: error }, 'retention sweep failed');
        return [];
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
