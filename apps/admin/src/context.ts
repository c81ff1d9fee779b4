import { AccountsService, ManualSuppressions, signInLink } from '@sendline/application';
import {
  AccountsView,
  consoleUrlFromEnv,
  createRedis,
  EventStore,
  mailHostFromEnv,
  mxResolverFromEnv,
  returnPathLabelFromEnv,
  secretKeyFromEnv,
  serviceAddresses,
  SignInLinks,
  spfDomainFromEnv,
  SuppressionView,
  systemSenderFromEnv,
  txtResolverFromEnv,
  type MxResolver,
  type Redis,
  type ServiceAddresses,
  type TxtResolver,
} from '@sendline/infra';

export interface AdminContextOptions {
  env?: NodeJS.ProcessEnv;
  /** Overrides the DNS lookups of domain verification (default: SENDLINE_DNS_SERVERS or the system's). */
  resolveTxt?: TxtResolver;
  /** Overrides the MX lookups of return path verification (default: SENDLINE_DNS_SERVERS or the system's). */
  resolveMx?: MxResolver;
}

interface Connected {
  redis: Redis;
  store: EventStore;
  view: AccountsView;
  accounts: AccountsService;
  suppressions: ManualSuppressions;
}

/**
 * The services a console command uses, connected on first use (so `--help` connects to nothing), and
 * closed together when the command is done, so the process ends on its own.
 *
 * The console's configuration is read here, from the environment (`env`), and handed to the use cases:
 * the service addresses, the names of the DNS records (SENDLINE_MAIL_HOST, SENDLINE_SPF_DOMAIN,
 * SENDLINE_RETURN_PATH_LABEL), the key that seals DKIM private keys (SENDLINE_SECRET_KEY) and the DNS servers of
 * domain and return path verification (SENDLINE_DNS_SERVERS).
 */
export class AdminContext {
  readonly addresses: ServiceAddresses;
  private readonly env: NodeJS.ProcessEnv;
  private connected: Connected | undefined;

  constructor(private readonly options: AdminContextOptions = {}) {
    this.env = options.env ?? process.env;
    this.addresses = serviceAddresses(this.env);
  }

  private connect(): Connected {
    if (this.connected) return this.connected;
    const env = this.env;
    const redis = createRedis(this.addresses.redisUrl);
    // A console command either reaches Redis or says so; it does not wait for it to come back.
    redis.on('error', () => undefined);
    const store = EventStore.at(this.addresses, 'admin');
    const view = new AccountsView(redis);
    // The secret key and the DNS settings are read when a command needs them (domain add, domain verify), so
    // that every other command runs without them, and a bad setting fails only the command that uses it.
    let resolver: TxtResolver | undefined;
    let mxResolver: MxResolver | undefined;
    const resolveTxt: TxtResolver = this.options.resolveTxt ?? ((name) => (resolver ??= txtResolverFromEnv(env))(name));
    const resolveMx: MxResolver = this.options.resolveMx ?? ((name) => (mxResolver ??= mxResolverFromEnv(env))(name));
    this.connected = {
      redis,
      store,
      view,
      accounts: new AccountsService({
        store,
        view,
        mailHost: mailHostFromEnv(env),
        spfDomain: spfDomainFromEnv(env),
        returnPathLabel: returnPathLabelFromEnv(env),
        secretKey: () => secretKeyFromEnv(env),
        resolveTxt,
        resolveMx,
        actor: 'admin command line',
      }),
      suppressions: new ManualSuppressions({ store, accounts: view, suppressions: new SuppressionView(redis) }),
    };
    return this.connected;
  }

  get accounts(): AccountsService {
    return this.connect().accounts;
  }

  get accountsView(): AccountsView {
    return this.connect().view;
  }

  /** The From of system mail (SENDLINE_SYSTEM_SENDER or the default). */
  get systemSender(): string {
    return systemSenderFromEnv(this.env);
  }

  /**
   * A one-time console sign-in link for a member (15 minutes, single use), printed for the first admin of an
   * organization, who has no console yet to ask for one by email. The link names SENDLINE_CONSOLE_URL (default: the
   * API on 127.0.0.1:SENDLINE_API_PORT).
   */
  async signInLink(organizationId: string, email: string): Promise<string> {
    const token = await new SignInLinks(this.redisClient).issue({ organizationId, email: email.toLowerCase() });
    return signInLink(consoleUrlFromEnv(this.env), token);
  }

  get suppressions(): ManualSuppressions {
    return this.connect().suppressions;
  }

  get eventStore(): EventStore {
    return this.connect().store;
  }

  get redisClient(): Redis {
    return this.connect().redis;
  }

  async close(): Promise<void> {
    const connected = this.connected;
    this.connected = undefined;
    await connected?.store.disconnect().catch(() => undefined);
    connected?.redis.disconnect();
  }
}
