/**
 * Calls in flight, per endpoint and in all: at most `perEndpoint` calls of one webhook at once and `total` over all
 * of them; a webhook's further calls wait in its own queue. A free slot goes to the next webhook in turn that has
 * work and room, so a slow or dead endpoint holds only its own slots and never delays another's calls (no
 * head-of-line blocking). A webhook's queue is bounded too: once it holds `queueLimit` calls and would take longer
 * than `maxWaitMs` to drain at the webhook's pace (or holds `HARD_QUEUE_FACTOR` times `queueLimit`), it is backed up
 * and the caller sets its next calls aside (caller.ts) instead of letting one slow or dead endpoint fill the memory.
 * A healthy endpoint that is merely busy (a fetched batch brought it hundreds of calls it answers in milliseconds)
 * is not backed up: setting its calls aside would make them wait a minute for nothing.
 */

/** Past this many times `queueLimit` calls waiting, a webhook is backed up whatever its pace (bounded memory). */
export const HARD_QUEUE_FACTOR = 20;
/** The weight of the last call in a webhook's mean call time. */
const MEAN_WEIGHT = 0.2;
export class EndpointPool {
  private readonly queues = new Map<string, (() => Promise<void>)[]>();
  private readonly active = new Map<string, number>();
  private running = 0;
  private queued = 0;
  private readonly waiters: (() => void)[] = [];
  /** Per webhook: its mean call time (ms) and when its running calls started. */
  private readonly pace = new Map<string, { meanMs: number | undefined; started: number[] }>();

  constructor(
    private readonly perEndpoint: number,
    private readonly total: number,
    readonly queueLimit: number,
    private readonly maxWaitMs = 5000,
    private readonly now: () => number = performance.now.bind(performance),
  ) {}

  /** Calls waiting or running. */
  get pending(): number {
    return this.running + this.queued;
  }

  queueLength(endpoint: string): number {
    return this.queues.get(endpoint)?.length ?? 0;
  }

  /**
   * Whether the webhook's next call should be set aside: `queueLimit` calls wait already and, at its pace (its mean
   * call time, or the age of its oldest running call when that is longer: a hanging endpoint has no mean yet), they
   * would take longer than `maxWaitMs` to go out.
   */
  backedUp(endpoint: string): boolean {
    const waiting = this.queueLength(endpoint);
    if (waiting < this.queueLimit) return false;
    if (waiting >= this.queueLimit * HARD_QUEUE_FACTOR) return true;
    const pace = this.pace.get(endpoint);
    const oldest = pace && pace.started.length > 0 ? this.now() - Math.min(...pace.started) : 0;
    const callMs = Math.max(pace?.meanMs ?? 0, oldest);
    return (waiting * callMs) / this.perEndpoint > this.maxWaitMs;
  }

  submit(endpoint: string, task: () => Promise<void>): void {
    const queue = this.queues.get(endpoint) ?? [];
    queue.push(task);
    this.queues.set(endpoint, queue);
    this.queued++;
    this.pump();
  }

  /**
   * Whether every slot is taken and at least as many calls again wait for a slot overall (not for their own
   * webhook's): the caller stops taking calls until one finishes. Calls waiting behind their own webhook's limit
   * do not count (a dead endpoint never holds the others back); their number is bounded by `queueLimit`.
   */
  busy(): boolean {
    if (this.running < this.total) return false;
    let ready = 0;
    for (const [endpoint, queue] of this.queues) {
      if ((this.active.get(endpoint) ?? 0) < this.perEndpoint) ready += queue.length;
      if (ready >= this.total) return true;
    }
    return false;
  }

  /** Resolves when a call finishes. */
  finished(): Promise<void> {
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Resolves once nothing is pending. */
  async idle(): Promise<void> {
    while (this.pending > 0) await this.finished();
  }

  private pump(): void {
    let progressed = true;
    while (this.running < this.total && progressed) {
      progressed = false;
      for (const [endpoint, queue] of this.queues) {
        if (this.running >= this.total) break;
        const active = this.active.get(endpoint) ?? 0;
        if (active >= this.perEndpoint) continue;
        const task = queue.shift()!;
        this.queued--;
        // Round robin: the endpoint goes to the back of the line.
        this.queues.delete(endpoint);
        if (queue.length > 0) this.queues.set(endpoint, queue);
        this.start(endpoint, task);
        progressed = true;
      }
    }
  }

  private start(endpoint: string, task: () => Promise<void>): void {
    this.running++;
    this.active.set(endpoint, (this.active.get(endpoint) ?? 0) + 1);
    let pace = this.pace.get(endpoint);
    if (!pace) {
      // The pace of at most 10,000 webhooks is kept: an idle one's is forgotten first.
      if (this.pace.size >= 10_000) {
        for (const [other, { started }] of this.pace) {
          if (started.length === 0) {
            this.pace.delete(other);
            break;
          }
        }
      }
      pace = { meanMs: undefined, started: [] };
      this.pace.set(endpoint, pace);
    }
    const started = this.now();
    pace.started.push(started);
    void task()
      .catch(() => undefined)
      .finally(() => {
        this.running--;
        const tookMs = this.now() - started;
        pace.meanMs = pace.meanMs === undefined ? tookMs : pace.meanMs + MEAN_WEIGHT * (tookMs - pace.meanMs);
        pace.started.splice(pace.started.indexOf(started), 1);
        const left = (this.active.get(endpoint) ?? 1) - 1;
        if (left === 0) this.active.delete(endpoint);
        else this.active.set(endpoint, left);
        this.pump();
        for (const wake of this.waiters.splice(0)) wake();
      });
  }
}
