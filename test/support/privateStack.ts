/**
 * Private copies of the real services, for tests that kill them (issue 11's fault tests). The shared services
 * (`.local/services.env`) are never touched: each stack runs `infra/local/bin/infra` with its own data directory
 * (`.local/private/<name>`) and a free block of loopback ports, reusing the Kafka jars and Apicurio already in
 * `.local` (nothing is downloaded again).
 *
 * ```ts
 * const stack = await startPrivateStack({ name: 'kafka-broker', brokers: 3 }); // ~30 s: 3 brokers, ClickHouse, Redis, provisioned
 * stack.addresses;             // ServiceAddresses, e.g. connectApiDependencies(stack.addresses, …)
 * spawn(…, { env: { ...process.env, ...stack.env } }); // a child process (API, sender) on the private stack
 * await stack.kill('kafka-2');  // SIGKILL one broker (or 'kafka' for all, 'redis', 'clickhouse', 'registry')
 * // { redisCluster: true }: a Redis Cluster (three masters, one replica each) instead of the single Redis; its nodes
 * // are 'redis-1' … 'redis-6' (stack.redisNodePort(n) is node n's port), 'redis' is all six
 * await stack.start('kafka-2'); // start it again on its data, waits until it listens
 * await stack.stopService('redis'); // graceful stop (SIGTERM)
 * await stack.stop();           // in afterAll: SIGKILL whatever is left and wipe the directory
 * ```
 *
 * `services` lists what runs privately (default Kafka, ClickHouse and Redis); the others are the ones in the
 * environment (the shared services), e.g. `{ services: ['redis'] }` for a Redis fault on the shared Kafka. The schema
 * registry is the shared one unless asked for (no fault test kills it): a registry's schemas are not tied to the
 * Kafka the events go to, and each private registry was a Java process started, and its schemas registered, once
 * per stack, which was a large part of the fault tests' CPU on two cores. A private registry needs a private Kafka
 * (it stores its schemas there). With `brokers: 3` broker n is `kafka-n` and has node id n, so the
 * leader of a partition (kafkajs `fetchTopicMetadata`) is killed with `stack.kill(\`kafka-${leader}\`)`.
 * A stack left behind by a test that crashed is killed and wiped when a stack of the same name starts, and the
 * stack's processes are SIGKILLed when the test process exits.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { serviceAddresses, type ServiceAddresses } from '@sendline/infra';
import { freePortBlock } from './ports';

export type PrivateService = 'kafka' | 'registry' | 'clickhouse' | 'redis';
/** A service, or one broker of several (`kafka-1` … `kafka-3`). */
export type PrivateProcess = PrivateService | `kafka-${number}` | `redis-${number}`;

export interface PrivateStackOptions {
  /** Names the directory `.local/private/<name>`; one stack per name at a time. */
  name: string;
  brokers?: 1 | 3;
  /** A Redis Cluster of three masters with one replica each (`infra up --redis-cluster`) instead of one Redis. */
  redisCluster?: boolean;
  /** What runs privately (default Kafka, ClickHouse and Redis); the rest is taken from the environment. */
  services?: PrivateService[];
}

export interface PrivateStack {
  name: string;
  dir: string;
  addresses: ServiceAddresses;
  /** The addresses as environment variables (KAFKA_BROKERS, SCHEMA_REGISTRY_URL, CLICKHOUSE_URL, REDIS_URL). */
  env: Record<string, string>;
  /** SIGKILL: what a crash looks like. Resolves once the process is gone. */
  kill(service: PrivateProcess): Promise<void>;
  /** Graceful stop (SIGTERM, waits up to 30 s). */
  stopService(service: PrivateProcess): Promise<void>;
  /** Starts a killed or stopped service again on its data; resolves once it answers. */
  start(service: PrivateProcess): Promise<void>;
  /** The pid of a running service, if any. */
  pid(service: PrivateProcess): number | undefined;
  /** The port of node n (1-6) of the stack's Redis Cluster (`redisCluster: true`). */
  redisNodePort(node: number): number;
  /** Runs any other infra command on this stack (e.g. `status`); returns its output. */
  infra(...args: string[]): Promise<string>;
  /** SIGKILLs everything of this stack and wipes its directory. */
  stop(): Promise<void>;
}

const ROOT = resolve(import.meta.dirname, '../..');
const SCRIPT = join(ROOT, 'infra/local/bin/infra');
const SHARED_LOCAL = join(ROOT, '.local');
const ALL: PrivateService[] = ['kafka', 'registry', 'clickhouse', 'redis'];
/** What runs privately unless `services` says otherwise: all but the schema registry. */
const DEFAULT_SERVICES: PrivateService[] = ['kafka', 'clickhouse', 'redis'];
/**
 * Ports of one stack, from its base: brokers base, +2, +4 (controllers +1, +3, +5), registry +6, ClickHouse +7/+8,
 * Redis +9; a Redis Cluster's six nodes +10 … +15 and their cluster buses +16 … +21.
 */
const BLOCK = 22;
const REDIS_CLUSTER_OFFSET = 10;

const run = promisify(execFile);

export async function startPrivateStack(options: PrivateStackOptions): Promise<PrivateStack> {
  if (!/^[A-Za-z0-9_-]+$/.test(options.name))
    throw new Error(`a private stack's name is [A-Za-z0-9_-]+: ${options.name}`);
  const services = new Set(options.services ?? DEFAULT_SERVICES);
  if (services.has('registry') && !services.has('kafka'))
    throw new Error('a private schema registry needs a private Kafka (it keeps its schemas there)');
  const brokers = options.brokers ?? 1;
  const dir = join(SHARED_LOCAL, 'private', options.name);
  killAll(dir);
  rmSync(dir, { recursive: true, force: true });

  const base = await freePortBlock(BLOCK);
  const shared = serviceAddresses();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SENDLINE_LOCAL_DIR: dir,
    SENDLINE_DOWNLOADS_DIR: SHARED_LOCAL,
    SENDLINE_KAFKA_PORT: String(base),
    SENDLINE_KAFKA_CONTROLLER_PORT: String(base + 1),
    SENDLINE_REGISTRY_PORT: String(base + 6),
    SENDLINE_CLICKHOUSE_HTTP_PORT: String(base + 7),
    SENDLINE_CLICKHOUSE_TCP_PORT: String(base + 8),
    SENDLINE_REDIS_PORT: String(base + 9),
    SENDLINE_REDIS_CLUSTER_PORT: String(base + REDIS_CLUSTER_OFFSET),
  };
  // An address in the environment means "use that one"; the private services must not inherit the shared ones.
  const external: Record<PrivateService, [string, string]> = {
    kafka: ['KAFKA_BROKERS', shared.kafkaBrokers.join(',')],
    registry: ['SCHEMA_REGISTRY_URL', shared.schemaRegistryUrl],
    clickhouse: ['CLICKHOUSE_URL', shared.clickhouseUrl],
    redis: ['REDIS_URL', shared.redisUrl],
  };
  for (const service of ALL) {
    const [variable, address] = external[service];
    if (services.has(service)) delete env[variable];
    else env[variable] = address;
  }

  const infra = async (...args: string[]): Promise<string> => {
    try {
      const { stdout, stderr } = await run('bash', [SCRIPT, ...args], { env, cwd: ROOT, maxBuffer: 16 << 20 });
      return `${stdout}${stderr}`;
    } catch (error) {
      const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
      throw new Error(`infra ${args.join(' ')} failed on private stack ${options.name}:\n${stdout}${stderr}`, {
        cause: error,
      });
    }
  };
  const onExit = () => killAll(dir);
  process.on('exit', onExit);

  try {
    await infra('up', '--brokers', String(brokers), ...(options.redisCluster ? ['--redis-cluster'] : []));
  } catch (error) {
    await stopAll();
    throw error;
  }
  const written = parseEnv(readFileSync(join(dir, 'services.env'), 'utf8'));
  const addressEnv = {
    KAFKA_BROKERS: written.KAFKA_BROKERS!,
    SCHEMA_REGISTRY_URL: written.SCHEMA_REGISTRY_URL!,
    CLICKHOUSE_URL: written.CLICKHOUSE_URL!,
    REDIS_URL: written.REDIS_URL!,
  };

  async function stopAll(): Promise<void> {
    process.off('exit', onExit);
    await killAllAndWait(dir);
    rmSync(dir, { recursive: true, force: true });
  }

  return {
    name: options.name,
    dir,
    addresses: serviceAddresses({ ...addressEnv, CLICKHOUSE_DATABASE: shared.clickhouseDatabase }),
    env: addressEnv,
    kill: async (service) => void (await infra('kill', service)),
    stopService: async (service) => void (await infra('stop', service)),
    start: async (service) => void (await infra('start', service)),
    pid: (service) => {
      const file = join(dir, 'run', `${service}.pid`);
      if (!existsSync(file)) return undefined;
      const pid = Number(readFileSync(file, 'utf8').trim());
      return alive(pid) ? pid : undefined;
    },
    redisNodePort: (node) => base + REDIS_CLUSTER_OFFSET + node - 1,
    infra,
    stop: stopAll,
  };
}

function parseEnv(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (match) values[match[1]!] = match[2]!;
  }
  return values;
}

function pidsOf(dir: string): number[] {
  const runDir = join(dir, 'run');
  if (!existsSync(runDir)) return [];
  return readdirSync(runDir)
    .filter((file) => file.endsWith('.pid'))
    .map((file) => Number(readFileSync(join(runDir, file), 'utf8').trim()))
    .filter((pid) => Number.isInteger(pid) && pid > 0);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGKILLs every process the stack's directory has a pid for (synchronous: also runs at process exit). */
function killAll(dir: string): number[] {
  const pids = pidsOf(dir);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return pids;
}

async function killAllAndWait(dir: string): Promise<void> {
  const pids = killAll(dir);
  const deadline = Date.now() + 10_000;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}
