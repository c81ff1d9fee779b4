import {
  AccountsService,
  AccountsView,
  createRedis,
  EventStore,
  serviceAddresses,
  SuppressionView,
  type Redis,
  type ServiceAddresses,
  type TxtResolver,
} from '@sendline/infra';

export interface AdminContextOptions {
  env?: NodeJS.ProcessEnv;
  /** Overrides the DNS lookups of domain verification (default: SENDLINE_DNS_SERVERS or the system's). */
  resolveTxt?: TxtResolver;
}

/**
 * The services a console command uses, connected on first use (so `--help` connects to nothing), and
 * closed together when the command is done, so the process ends on its own.
 */
export class AdminContext {
  readonly addresses: ServiceAddresses;
  private redis: Redis | undefined;
  private store: EventStore | undefined;
  private service: AccountsService | undefined;

  constructor(private readonly options: AdminContextOptions = {}) {
    this.addresses = serviceAddresses(options.env ?? process.env);
  }

  get accounts(): AccountsService {
    if (!this.service) {
      this.redis = createRedis(this.addresses.redisUrl);
      // A console command either reaches Redis or says so; it does not wait for it to come back.
      this.redis.on('error', () => undefined);
      this.store = new EventStore({
        brokers: this.addresses.kafkaBrokers,
        registryUrl: this.addresses.schemaRegistryUrl,
        clientId: 'admin',
        topics: this.addresses.topics,
      });
      this.service = new AccountsService({
        store: this.store,
        view: new AccountsView(this.redis),
        suppressions: new SuppressionView(this.redis),
        ...(this.options.resolveTxt ? { resolveTxt: this.options.resolveTxt } : {}),
      });
    }
    return this.service;
  }

  get eventStore(): EventStore {
    void this.accounts;
    return this.store!;
  }

  get redisClient(): Redis {
    void this.accounts;
    return this.redis!;
  }

  async close(): Promise<void> {
    const store = this.store;
    const redis = this.redis;
    this.store = undefined;
    this.redis = undefined;
    this.service = undefined;
    await store?.disconnect().catch(() => undefined);
    redis?.disconnect();
  }
}
