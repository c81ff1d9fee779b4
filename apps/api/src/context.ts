/**
 * What app.ts gives every route, in a module of its own so that no route imports app.ts (which imports the
 * routes): the services the API runs on, the fastify instance a route is registered on (typed by its TypeBox
 * schemas), and the body limits.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  AccountsService,
  ConsoleSignIn,
  ManualSuppressions,
  TemplatesService,
  InboundMessages,
  InboundSettings,
  WebhooksService,
} from '@sendline/application';
import type {
  ActivityReader,
  AccountsView,
  AllowanceCounter,
  BounceReader,
  DeadLetterReader,
  EventStore,
  IdempotencyStore,
  KeyUsage,
  MessageDumps,
  OutboundStatsReader,
  SuppressionView,
} from '@sendline/infra';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { Redis } from 'ioredis';

/** What the API runs on; every piece is passed in, so tests build the app against the real services. */
export interface ApiDependencies {
  store: EventStore;
  redis: Redis;
  accounts: AccountsView;
  suppressions: SuppressionView;
  allowance: AllowanceCounter;
  idempotency: IdempotencyStore;
  activity: ActivityReader;
  /** Bounces, statistics and message sources: further reads of the activity store. */
  bounces: BounceReader;
  /** The organization's messages' dead letters (the console's recent problems). */
  deadLetters: DeadLetterReader;
  stats: OutboundStatsReader;
  dumps: MessageDumps;
  /** The organization's webhooks (`/webhooks`): the use case, with its secret key, mode and resolver. */
  webhooks: WebhooksService;
  /** The organization's templates (`/templates`) and what a send with a template renders. */
  templates: TemplatesService;
  /** The organization's inbound settings and rules (`/server`, `/triggers/inboundRules`). */
  inbound: InboundSettings;
  /** The organization's inbound messages (`/messages/inbound`). */
  inboundMessages: InboundMessages;
  /** The clock and id source (passed in, so the domain never reads them itself). */
  now: () => number;
  newId: () => string;
  /** The mail host shown in DNS records (the return path's MX; its SPF's include unless spfDomain says otherwise). */
  mailHost: string;
  /** The domain a return path's SPF record includes (SENDLINE_SPF_DOMAIN); default: the mail host. */
  spfDomain?: string;
  /** When each API key was last used (the console shows it); without it, uses are not recorded. */
  keyUsage?: KeyUsage;
  /** The web console's services (/console/api); without them, the console's endpoints are not served. */
  console?: ConsoleServices;
}

/** What the console's endpoints run on: its sign-in and sessions, and the account use cases the admin line uses. */
export interface ConsoleServices {
  signIn: ConsoleSignIn;
  accounts: AccountsService;
  suppressions: ManualSuppressions;
}

/** The API's fastify instance: a route's `request` and answer take their types from the route's schemas. */
export type Api = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** A single message may carry 10 MB; base64 and JSON add about a third. */
export const SINGLE_BODY_LIMIT = 15 * 1024 * 1024;
/** A batch: Postmark's 50 MB. */
export const BATCH_BODY_LIMIT = 50 * 1024 * 1024;
