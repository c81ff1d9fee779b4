/**
 * Calls in flight, per endpoint and in all: at most `perEndpoint` calls of one webhook at once and `total` over all
 * of them; a webhook's further calls wait in its own queue. A free slot goes to the next webhook in turn that has
 * work and room, so a slow or dead endpoint holds only its own slots and never delays another's calls (no
 * head-of-line blocking). A webhook's queue is bounded too (`queueLimit`): past it the caller sets calls aside
 * (caller.ts) instead of letting one dead endpoint fill the memory.
 */
export class EndpointPool {
  private readonly queues = new Map<string, (() => Promise<void>)[]>();
  private readonly active = new Map<string, number>();
  private running = 0;
  private queued = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(
    private readonly perEndpoint: number,
    private readonly total: number,
    readonly queueLimit: number,
  ) {}

  /** Calls waiting or running. */
  get pending(): number {
    return this.running + this.queued;
  }

  queueLength(endpoint: string): number {
    return this.queues.get(endpoint)?.length ?? 0;
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
    void task()
      .catch(() => undefined)
      .finally(() => {
        this.running--;
        const left = (this.active.get(endpoint) ?? 1) - 1;
        if (left === 0) this.active.delete(endpoint);
        else this.active.set(endpoint, left);
        this.pump();
        for (const wake of this.waiters.splice(0)) wake();
      });
  }
}
