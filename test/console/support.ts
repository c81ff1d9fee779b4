import type { ApiDependencies, ConsoleServices } from '@sendline/api';
import { ConsoleSignIn, SIGN_IN_TAG } from '@sendline/application';
import type { MessageAcceptedData } from '@sendline/domain';
import {
  ConsoleSessions,
  RateLimiter,
  SignInLinks,
  type EventStore,
  type RateLimit,
  type RunningConsumer,
  type MxResolver,
  type TxtResolver,
} from '@sendline/infra';
import { testAccountsService, testSystemMail } from '../support/api';
import { call } from '../support/http';
import { eventually, uniqueName } from '../support/services';

/**
 * What the console's tests share: a mailbox that sees every system mail the pipeline accepts from now on (a consumer
 * of the messages topic under a fresh group starting at its end: the sign-in links as MessageAccepted carries them,
 * the same event the sender delivers), and a browser-like client (one cookie, the CSRF header).
 */

export interface SignInMailbox {
  /** Every sign-in mail accepted since the mailbox opened, oldest first. */
  readonly mails: MessageAcceptedData[];
  /** The token of the next sign-in mail to `email` after the `seen` first ones (waits for it). */
  tokenFor(email: string, seen?: number): Promise<string>;
  /** How many sign-in mails to `email` arrived so far. */
  countFor(email: string): number;
  close(): Promise<void>;
}

export async function openSignInMailbox(store: EventStore): Promise<SignInMailbox> {
  const groupId = uniqueName('test-console-mailbox');
  const topic = store.topics.messages;
  const admin = store.kafka.admin();
  await admin.connect();
  try {
    const ends = await admin.fetchTopicOffsets(topic);
    await admin.setOffsets({
      groupId,
      topic,
      partitions: ends.map((p) => ({ partition: p.partition, offset: p.high })),
    });
  } finally {
    await admin.disconnect();
  }
  const mails: MessageAcceptedData[] = [];
  const consumer: RunningConsumer = await store.consume({
    groupId,
    topics: [topic],
    retryUnknownErrors: false,
    handle: async ({ event }) => {
      if (event?.type !== 'MessageAccepted') return;
      const data = event.data as MessageAcceptedData;
      if (data.tag === SIGN_IN_TAG) mails.push(data);
    },
  });
  const to = (email: string) => mails.filter((mail) => mail.activeRecipients.includes(email.toLowerCase()));
  return {
    mails,
    countFor: (email) => to(email).length,
    tokenFor: (email, seen = 0) =>
      eventually(
        async () => {
          const mail = to(email)[seen];
          const token = mail && /#token=([A-Za-z0-9_-]+)/.exec(mail.textBody ?? '')?.[1];
          return token || undefined;
        },
        30_000,
        `a sign-in mail to ${email}`,
      ),
    close: () => consumer.stop(),
  };
}

/** A browser's side of the console: the session cookie it was given, and the CSRF token from /me. */
export class ConsoleClient {
  cookie: string | undefined;
  csrfToken: string | undefined;
  lastSetCookie: string | null = null;

  constructor(readonly origin: string) {}

  async request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const response = await call(this.origin, method, `/console/api${path}`, {
      body,
      headers: {
        ...(this.cookie ? { Cookie: this.cookie } : {}),
        ...(this.csrfToken && method !== 'GET' ? { 'X-CSRF-Token': this.csrfToken } : {}),
        ...headers,
      },
    });
    const setCookie = response.headers.get('set-cookie');
    if (setCookie) {
      this.lastSetCookie = setCookie;
      const pair = setCookie.split(';')[0]!;
      this.cookie = pair.endsWith('=') ? undefined : pair;
    }
    return response;
  }

  get = (path: string) => this.request('GET', path);
  post = (path: string, body?: unknown) => this.request('POST', path, body ?? {});
  put = (path: string, body?: unknown) => this.request('PUT', path, body ?? {});
  delete = (path: string) => this.request('DELETE', path);

  /** Redeems a sign-in token: the session cookie and the CSRF token are kept for the next requests. */
  async signInWith(token: string) {
    const response = await this.post('/sign-in/session', { token });
    if (response.status === 200) this.csrfToken = response.body.csrfToken;
    return response;
  }
}

/** The API's origin (its base URL without /v1). */
export const originOf = (baseUrl: string) => baseUrl.replace(/\/v1$/, '');

/**
 * The console's services on `deps`, as the API builds them, with the sign-in counters in a namespace of the test's
 * own (every test comes from 127.0.0.1: the client limit must not carry over from one run, or test, to the next)
 * and, if asked, short-lived links and sessions.
 */
export function testConsoleServices(
  deps: ApiDependencies,
  options: {
    linkTtlMs?: number;
    session?: { idleMs: number; absoluteMs: number };
    limits?: { perAddress: RateLimit; perClient: RateLimit };
    resolveTxt?: TxtResolver;
    resolveMx?: MxResolver;
  } = {},
): ConsoleServices {
  const base = deps.console!;
  return {
    ...base,
    ...(options.resolveTxt
      ? {
          accounts: testAccountsService(deps, {
            resolveTxt: options.resolveTxt,
            ...(options.resolveMx && { resolveMx: options.resolveMx }),
          }),
        }
      : {}),
    signIn: new ConsoleSignIn({
      accounts: deps.accounts,
      links: new SignInLinks(deps.redis, 'sl', options.linkTtlMs),
      sessions: new ConsoleSessions(deps.redis, 'sl', Date.now, options.session),
      limiter: new RateLimiter(deps.redis, uniqueName('test-limits')),
      systemMail: testSystemMail(deps),
      consoleUrl: 'http://127.0.0.1:3000',
      ...(options.limits ? { limits: options.limits } : {}),
    }),
  };
}
