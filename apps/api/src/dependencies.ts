import { randomUUID } from 'node:crypto';
import {
  AccountsService,
  ConsoleSignIn,
  ManualSuppressions,
  SystemMail,
  TemplatesService,
  InboundMessages,
  InboundSettings,
  WebhooksService,
} from '@sendline/application';
import {
  AccountsView,
  ActivityQueries,
  AllowanceCounter,
  ClickHouseActivityReader,
  ClickHouseBounceReader,
  ClickHouseDeadLetterReader,
  ClickHouseOutboundStatsReader,
  ConsoleSessions,
  consoleUrlFromEnv,
  createClickHouse,
  createRedis,
  EventStore,
  IdempotencyStore,
  KeyUsage,
  mailHostFromEnv,
  mxResolverFromEnv,
  RateLimiter,
  returnPathLabelFromEnv,
  RebuiltMessageDumps,
  secretKeyFromEnv,
  ClickHouseInboundReader,
  WebhookDeliveryLog,
  inboundDomainFromEnv,
  SignInLinks,
  spfDomainFromEnv,
  SuppressionView,
  TemplatesView,
  systemHostResolver,
  systemSenderFromEnv,
  txtResolverFromEnv,
  type HostResolver,
  type MxResolver,
  type ServiceAddresses,
  type TxtResolver,
} from '@sendline/infra';
import type { ApiDependencies } from './context';

export interface ApiOptions {
  clientId?: string;
  mailHost?: string;
  /** Development (plain http webhooks, local addresses allowed); default: SENDLINE_DEV=1. */
  development?: boolean;
  /** How a webhook URL's host is resolved for the address check; default: the system resolver. */
  resolveHost?: HostResolver;
  /** Where the console is served, put in sign-in links; default SENDLINE_CONSOLE_URL or http://127.0.0.1:<port>. */
  consoleUrl?: string;
  /** The console's TXT lookups for domain verification; default SENDLINE_DNS_SERVERS or the system's. */
  resolveTxt?: TxtResolver;
  /** The console's MX lookups for return path verification; default SENDLINE_DNS_SERVERS or the system's. */
  resolveMx?: MxResolver;
  /** The From of system mail; default SENDLINE_SYSTEM_SENDER or the default. */
  systemSender?: string;
}

/** The API's dependencies on the real services, and how to let go of them. */
export function connectApiDependencies(
  addresses: ServiceAddresses,
  options: ApiOptions = {},
): { deps: ApiDependencies; disconnect(): Promise<void> } {
  const redis = createRedis(addresses.redisUrl);
  const clickhouse = createClickHouse(addresses.clickhouseUrl);
  const store = EventStore.at(addresses, options.clientId ?? 'api');
  const accounts = new AccountsView(redis);
  const suppressions = new SuppressionView(redis);
  const activityQueries = new ActivityQueries(clickhouse, addresses.clickhouseDatabase);
  const now = () => Date.now();
  const newId = () => randomUUID();
  const allowance = new AllowanceCounter(redis);
  const mailHost = options.mailHost ?? mailHostFromEnv();
  // A mail host given here (tests) is the SPF domain too, as it is by default.
  const spfDomain = options.mailHost ?? spfDomainFromEnv();
  let resolver: TxtResolver | undefined;
  let mxResolver: MxResolver | undefined;
  const deps: ApiDependencies = {
    store,
    redis,
    accounts,
    suppressions,
    allowance,
    idempotency: new IdempotencyStore(redis),
    activity: new ClickHouseActivityReader(clickhouse, addresses.clickhouseDatabase),
    bounces: new ClickHouseBounceReader(activityQueries, (organizationId, emails) =>
      suppressions.suppressedAmong(organizationId, emails),
    ),
    deadLetters: new ClickHouseDeadLetterReader(activityQueries),
    stats: new ClickHouseOutboundStatsReader(activityQueries),
    dumps: new RebuiltMessageDumps(activityQueries, store),
    webhooks: new WebhooksService({
      store,
      view: accounts,
      // Read when a secret is sealed, so an API without SENDLINE_SECRET_KEY still serves everything else.
      secretKey: () => secretKeyFromEnv(),
      development: options.development ?? process.env.SENDLINE_DEV === '1',
      resolveHost: options.resolveHost ?? systemHostResolver,
      now,
      newId,
    }),
    templates: new TemplatesService({ store, view: new TemplatesView(redis), now, newId }),
    inbound: new InboundSettings({
      store,
      view: accounts,
      secretKey: () => secretKeyFromEnv(),
      inboundDomain: inboundDomainFromEnv(),
      development: options.development ?? process.env.SENDLINE_DEV === '1',
      resolveHost: options.resolveHost ?? systemHostResolver,
      mailHost,
      resolveMx: options.resolveMx ?? ((name) => (mxResolver ??= mxResolverFromEnv())(name)),
      now,
      newId,
    }),
    inboundMessages: new InboundMessages({
      reader: new ClickHouseInboundReader(activityQueries),
      log: new WebhookDeliveryLog(redis),
      store,
      now,
    }),
    now,
    newId,
    mailHost,
    spfDomain,
    keyUsage: new KeyUsage(redis),
    console: {
      signIn: new ConsoleSignIn({
        accounts,
        links: new SignInLinks(redis),
        sessions: new ConsoleSessions(redis),
        limiter: new RateLimiter(redis),
        systemMail: new SystemMail({
          sending: { store, accounts, suppressions, allowance, now, newId },
          sender: options.systemSender ?? systemSenderFromEnv(),
        }),
        consoleUrl: options.consoleUrl ?? consoleUrlFromEnv(),
      }),
      accounts: new AccountsService({
        store,
        view: accounts,
        mailHost,
        spfDomain,
        returnPathLabel: returnPathLabelFromEnv(),
        // Read when a domain is added or verified, so a console without them still serves everything else.
        secretKey: () => secretKeyFromEnv(),
        resolveTxt: options.resolveTxt ?? ((name) => (resolver ??= txtResolverFromEnv())(name)),
        resolveMx: options.resolveMx ?? ((name) => (mxResolver ??= mxResolverFromEnv())(name)),
        now,
        newId,
      }),
      suppressions: new ManualSuppressions({ store, accounts, suppressions, now, newId }),
    },
  };
  return {
    deps,
    disconnect: async () => {
      await store.disconnect();
      await clickhouse.close();
      redis.disconnect();
    },
  };
}
