import { connect } from 'node:net';

/**
 * Whether any of the brokers accepts a connection at all: the difference between "no broker is reachable"
 * (Kafka is down: an append fails fast, the API answers 503 at once) and "a leader moved" (some broker answers:
 * the producer's retries ride out the election). One probe at a time, its answer kept for `cacheMs`, so many
 * waiting appends cost one connection attempt per broker.
 */
export class BrokerReachability {
  private probing: Promise<boolean> | undefined;
  private last: { at: number; reachable: boolean } | undefined;

  constructor(
    private readonly brokers: readonly string[],
    private readonly options: { cacheMs?: number; connectTimeoutMs?: number } = {},
  ) {}

  anyReachable(): Promise<boolean> {
    const cacheMs = this.options.cacheMs ?? 200;
    if (this.last && Date.now() - this.last.at < cacheMs) return Promise.resolve(this.last.reachable);
    this.probing ??= Promise.all(this.brokers.map((broker) => this.probe(broker)))
      .then((answers) => answers.some(Boolean))
      .then((reachable) => {
        this.last = { at: Date.now(), reachable };
        return reachable;
      })
      .finally(() => {
        this.probing = undefined;
      });
    return this.probing;
  }

  private probe(broker: string): Promise<boolean> {
    const colon = broker.lastIndexOf(':');
    const host = broker.slice(0, colon).replace(/^\[|\]$/g, '');
    const port = Number(broker.slice(colon + 1));
    return new Promise((resolve) => {
      const socket = connect({ host, port });
      const done = (reachable: boolean) => {
        socket.destroy();
        resolve(reachable);
      };
      socket.setTimeout(this.options.connectTimeoutMs ?? 500, () => done(false));
      socket.once('connect', () => done(true));
      socket.once('error', () => done(false));
    });
  }
}
