import { withDeadline, type Dependency } from '@sendline/infra';
import type { Admin } from 'kafkajs';
import type { Api, ApiDependencies } from '../context';

/** How long one dependency's check may take before it counts as down: /readyz always answers within about this. */
export const READINESS_CHECK_MS = 1000;

/**
 * What /readyz gates on. Every send needs Kafka (the append) and Redis (keys, domains, suppressions, allowance),
 * so without either the API cannot do its main job and a load balancer should send traffic elsewhere. ClickHouse
 * (activity reads) and the schema registry (needed only to register a schema this process has not used yet) are
 * reported but do not make the API not ready: sends go on without them, and their routes answer 503 meanwhile.
 */
export const READINESS_GATES: readonly Dependency[] = ['kafka', 'redis'];

type State = 'up' | 'down';

/** The checks of one API process; each runs at most once at a time (callers meanwhile share its answer). */
class Readiness {
  private admin: Promise<Admin> | undefined;
  private readonly running = new Map<Dependency, Promise<State>>();

  constructor(private readonly deps: ApiDependencies) {}

  async check(): Promise<Record<Dependency, State>> {
    const names: Dependency[] = ['kafka', 'redis', 'registry', 'clickhouse'];
    const states = await Promise.all(names.map((name) => this.once(name)));
    return Object.fromEntries(names.map((name, i) => [name, states[i]])) as Record<Dependency, State>;
  }

  private once(name: Dependency): Promise<State> {
    let running = this.running.get(name);
    if (!running) {
      running = withDeadline(name, `${name} readiness`, READINESS_CHECK_MS, this.probe(name))
        .then((): State => 'up')
        .catch((): State => 'down')
        .finally(() => this.running.delete(name));
      this.running.set(name, running);
    }
    return running;
  }

  private async probe(name: Dependency): Promise<void> {
    switch (name) {
      case 'redis': {
        // A client that knows its connection is down says so at once; otherwise one round trip.
        if (this.deps.redis.status !== 'ready') throw new Error(`redis is ${this.deps.redis.status}`);
        await this.deps.redis.ping();
        return;
      }
      case 'kafka': {
        // No broker accepting connections is "down" at once; otherwise the cluster must answer a metadata request.
        if (!(await this.deps.store.reachability.anyReachable())) throw new Error('no broker is reachable');
        try {
          this.admin ??= this.connectAdmin();
          await (await this.admin).describeCluster();
        } catch (error) {
          const admin = this.admin;
          this.admin = undefined;
          void admin?.then((connected) => connected.disconnect()).catch(() => undefined);
          throw error;
        }
        return;
      }
      case 'registry': {
        const response = await fetch(`${this.deps.store.codec.registryUrl}/schemas/types`, {
          signal: AbortSignal.timeout(READINESS_CHECK_MS),
        });
        await response.body?.cancel();
        if (!response.ok) throw new Error(`the registry answered ${response.status}`);
        return;
      }
      case 'clickhouse':
        await this.deps.activity.ping(AbortSignal.timeout(READINESS_CHECK_MS));
        return;
    }
  }

  /** One admin client for the checks, with short retries of its own (a leader election is not "down"). */
  private async connectAdmin(): Promise<Admin> {
    const admin = this.deps.store.kafka.admin({ retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 300 } });
    await admin.connect();
    return admin;
  }

  async close(): Promise<void> {
    const admin = this.admin;
    this.admin = undefined;
    await admin?.then((connected) => connected.disconnect()).catch(() => undefined);
  }
}

export function healthRoutes(deps: ApiDependencies) {
  return async function (app: Api): Promise<void> {
    const readiness = new Readiness(deps);
    app.addHook('onClose', () => readiness.close());
    app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
    /**
     * 200 when Kafka and Redis answer, else 503; every dependency's state in the body, each checked with a
     * deadline of READINESS_CHECK_MS, so a lost one shows within about a second and a returning one at the next
     * call.
     */
    app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
      const states = await readiness.check();
      const ready = READINESS_GATES.every((name) => states[name] === 'up');
      const degraded = Object.values(states).some((state) => state === 'down');
      return reply
        .code(ready ? 200 : 503)
        .send({ status: ready ? (degraded ? 'degraded' : 'ready') : 'not ready', ...states });
    });
  };
}
