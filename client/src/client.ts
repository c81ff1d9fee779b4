import { parseRetryAfter, SendlineError, type SendlineErrorInit } from './errors';
import { isObject, ShapeError } from './read';
import type {
  BatchResult,
  ClientOptions,
  Domain,
  EmailMessage,
  FetchFunction,
  FetchRequestInit,
  FetchResponse,
  ListEmailsFilters,
  ListEmailsResult,
  Me,
  Member,
  OutboundMessageDetails,
  SendOptions,
  SendResult,
  Suppression,
  SuppressionDeleteResult,
} from './types';
import { VERSION } from './version';
import {
  fromDomains,
  fromMe,
  fromMembers,
  fromWireBatch,
  fromWireMessageDetails,
  fromWireMessageList,
  fromWireSendResult,
  fromWireSuppressionDelete,
  fromWireSuppressionDump,
  toWireMessage,
  toWireSuppressionDelete,
} from './wire';

/** The production base address (the default `baseUrl`). */
export const PRODUCTION_BASE_URL = 'https://api.sendline.dev/v1';
/** The staging base address: pass it as `baseUrl` to work against staging. */
export const STAGING_BASE_URL = 'https://api.staging.sendline.dev/v1';
/** Default request timeout in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** The environment variable read when no API key is passed. */
export const API_KEY_ENV = 'SENDLINE_API_KEY';

const USER_AGENT = `sendline-typescript/${VERSION}`;

export interface EmailsApi {
  /** POST /email. Resolves with the send result (errorCode 0 means accepted, not delivered). */
  send(message: EmailMessage, options?: SendOptions): Promise<SendResult>;
  /**
   * POST /email/batch. Resolves with one result per message, in order; a refused
   * entry is `{ ok: false, errorCode, message }` and does not throw. Only a
   * failure of the whole request throws.
   */
  sendBatch(messages: readonly EmailMessage[], options?: SendOptions): Promise<BatchResult[]>;
  /** GET /messages/outbound: one page of sent messages (count 100, offset 0 by default). */
  list(filters?: ListEmailsFilters): Promise<ListEmailsResult>;
  /** GET /messages/outbound/{id}/details: one message with its bodies and events. */
  get(messageId: string): Promise<OutboundMessageDetails>;
}

export interface SuppressionsApi {
  /** GET /message-streams/outbound/suppressions/dump: every suppressed address of the organization. */
  list(): Promise<Suppression[]>;
  /**
   * POST /message-streams/outbound/suppressions/delete: one result per address, in order.
   * An invalid address yields `status: 'Failed'` without failing the others.
   */
  delete(addresses: string | readonly string[]): Promise<SuppressionDeleteResult[]>;
}

export interface DomainsApi {
  /** GET /domains: the organization's domains with their DNS records. */
  list(): Promise<Domain[]>;
}

export interface MembersApi {
  /** GET /members: the organization's members. */
  list(): Promise<Member[]>;
}

interface RequestSpec {
  method: 'GET' | 'POST';
  /** Path below the base address, starting with `/`. */
  path: string;
  query?: URLSearchParams;
  body?: unknown;
  idempotencyKey?: string;
}

interface ProcessLike {
  env?: Record<string, string | undefined>;
}

function environmentApiKey(): string | undefined {
  // `process` exists on Node (and some edge runtimes); elsewhere there is no environment to read.
  const proc = (globalThis as { process?: ProcessLike }).process;
  const value = proc?.env?.[API_KEY_ENV];
  return value === undefined || value === '' ? undefined : value;
}

/** Browsers manage User-Agent themselves; Node, Deno, Bun and edge runtimes let a client name itself. */
function mayName(): boolean {
  return typeof (globalThis as { document?: unknown }).document === 'undefined';
}

/**
 * The Sendline API client.
 *
 * ```ts
 * const sendline = new Client(); // reads SENDLINE_API_KEY
 * await sendline.emails.send({ from: 'me@example.com', to: 'you@example.org', subject: 'Hi', textBody: 'Hello' });
 * ```
 */
export class Client {
  readonly emails: EmailsApi;
  readonly suppressions: SuppressionsApi;
  readonly domains: DomainsApi;
  readonly members: MembersApi;

  readonly #apiKey: string | undefined;
  readonly #baseUrl: string;
  readonly #timeoutMs: number;
  readonly #fetch: FetchFunction;

  /**
   * @param apiKey Your API key (server-side secret). Omitted: `SENDLINE_API_KEY` from the environment,
   *   when the runtime has one. With neither, the first call fails with `missing_api_key`.
   */
  constructor(apiKey?: string, options: ClientOptions = {}) {
    this.#apiKey = apiKey === undefined || apiKey === '' ? environmentApiKey() : apiKey;
    this.#baseUrl = (options.baseUrl ?? PRODUCTION_BASE_URL).replace(/\/+$/, '');
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!Number.isFinite(timeoutMs) || timeoutMs < 0) {
      throw new TypeError(`timeoutMs must be a number >= 0 (0 disables the timeout), got ${String(timeoutMs)}`);
    }
    this.#timeoutMs = timeoutMs;
    // Call the global fetch through a wrapper: some runtimes refuse a detached `fetch` ("Illegal invocation").
    this.#fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init));

    this.emails = {
      send: (message, opts = {}) =>
        this.#request(
          {
            method: 'POST',
            path: '/email',
            body: toWireMessage(message),
            idempotencyKey: opts.idempotencyKey ?? newIdempotencyKey(),
          },
          (body) => fromWireSendResult(body),
        ),
      sendBatch: (messages, opts = {}) =>
        this.#request(
          {
            method: 'POST',
            path: '/email/batch',
            body: messages.map(toWireMessage),
            idempotencyKey: opts.idempotencyKey ?? newIdempotencyKey(),
          },
          (body) => fromWireBatch(body, messages.length),
        ),
      list: (filters = {}) =>
        this.#request({ method: 'GET', path: '/messages/outbound', query: listQuery(filters) }, fromWireMessageList),
      get: (messageId) =>
        this.#request(
          { method: 'GET', path: `/messages/outbound/${encodeURIComponent(messageId)}/details` },
          fromWireMessageDetails,
        ),
    };
    this.suppressions = {
      list: () =>
        this.#request({ method: 'GET', path: '/message-streams/outbound/suppressions/dump' }, fromWireSuppressionDump),
      delete: (addresses) =>
        this.#request(
          {
            method: 'POST',
            path: '/message-streams/outbound/suppressions/delete',
            body: toWireSuppressionDelete(typeof addresses === 'string' ? [addresses] : addresses),
          },
          fromWireSuppressionDelete,
        ),
    };
    this.domains = { list: () => this.#request({ method: 'GET', path: '/domains' }, fromDomains) };
    this.members = { list: () => this.#request({ method: 'GET', path: '/members' }, fromMembers) };
  }

  /** GET /me: the key's organization and the key itself (mode, scopes). Works with any active key. */
  me(): Promise<Me> {
    return this.#request({ method: 'GET', path: '/me' }, fromMe);
  }

  async #request<T>(spec: RequestSpec, parse: (body: unknown) => T): Promise<T> {
    const idempotencyKey = spec.idempotencyKey ?? null;
    // Every error of a keyed send names the key it was sent with, so that a caller can retry with it.
    const RequestError = class extends SendlineError {
      constructor(message: string, init: SendlineErrorInit) {
        super(message, { ...init, idempotencyKey });
      }
    };
    const apiKey = this.#apiKey;
    if (apiKey === undefined) {
      throw new RequestError(
        `No API key: pass one to new Client(apiKey) or set the ${API_KEY_ENV} environment variable.`,
        { code: 'missing_api_key', status: 0 },
      );
    }
    const query = spec.query?.toString() ?? '';
    const url = `${this.#baseUrl}${spec.path}${query === '' ? '' : `?${query}`}`;
    const what = `${spec.method} ${spec.path}`;

    const headers: Record<string, string> = { Authorization: `Bearer ${apiKey}`, Accept: 'application/json' };
    if (mayName()) headers['User-Agent'] = USER_AGENT;
    const init: FetchRequestInit = { method: spec.method, headers };
    if (spec.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(spec.body);
    }
    if (spec.idempotencyKey !== undefined) headers['Idempotency-Key'] = spec.idempotencyKey;

    let timedOut = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    if (this.#timeoutMs > 0) {
      const controller = new AbortController();
      init.signal = controller.signal;
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, this.#timeoutMs);
    }
    const timeoutError = (status: number, cause: unknown) =>
      new RequestError(
        `${what} timed out after ${this.#timeoutMs} ms.` +
          (spec.method === 'POST'
            ? ' The outcome is unknown: the API may have processed the request. Retry with the same idempotency key.'
            : ''),
        { code: 'timeout', status, cause },
      );

    try {
      const doFetch = this.#fetch;
      let response: FetchResponse;
      try {
        response = await doFetch(url, init);
      } catch (cause) {
        if (timedOut) throw timeoutError(0, cause);
        throw new RequestError(`${what} failed before any HTTP response: ${describe(cause)}`, {
          code: 'network_error',
          status: 0,
          cause,
        });
      }

      const status = response.status;
      const retryAfter = parseRetryAfter(response.headers.get('retry-after'), Date.now());
      let text: string;
      try {
        text = await response.text();
      } catch (cause) {
        if (timedOut) throw timeoutError(status, cause);
        throw new RequestError(`${what}: the connection failed while reading the answer: ${describe(cause)}`, {
          code: 'network_error',
          status,
          retryAfter,
          cause,
        });
      }

      const json = parseJson(text);

      if (!response.ok) {
        if (json.ok && isObject(json.value)) {
          const body = json.value;
          const message =
            typeof body.Message === 'string'
              ? body.Message
              : typeof body.message === 'string'
                ? body.message
                : undefined;
          if (message !== undefined) {
            const errorCode = typeof body.ErrorCode === 'number' ? body.ErrorCode : null;
            throw new RequestError(message, { code: 'http_error', status, retryAfter, errorCode });
          }
        }
        throw new RequestError(`${what} answered HTTP ${status} without a JSON error body: ${excerpt(text)}`, {
          code: 'invalid_response',
          status,
          retryAfter,
        });
      }

      if (!json.ok) {
        throw new RequestError(`${what} answered HTTP ${status} with a body that is not JSON: ${excerpt(text)}`, {
          code: 'invalid_response',
          status,
          retryAfter,
          cause: json.error,
        });
      }
      try {
        return parse(json.value);
      } catch (cause) {
        if (!(cause instanceof ShapeError)) throw cause;
        throw new RequestError(`${what} answered with an unexpected shape: ${cause.message}`, {
          code: 'invalid_response',
          status,
          retryAfter,
          cause,
        });
      }
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }
}

/**
 * A fresh Idempotency-Key for a send whose caller gave none: a retry of that very call (after a timeout
 * or a 503) can reuse it from the error (`error.idempotencyKey`) and the message is sent at most once.
 */
function newIdempotencyKey(): string {
  const webCrypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (webCrypto?.randomUUID) return webCrypto.randomUUID();
  let key = '';
  for (let i = 0; i < 32; i++) key += Math.floor(Math.random() * 16).toString(16);
  return key;
}

function listQuery(filters: ListEmailsFilters): URLSearchParams {
  const query = new URLSearchParams();
  query.set('count', String(filters.count ?? 100));
  query.set('offset', String(filters.offset ?? 0));
  const optional: [string, string | undefined][] = [
    ['recipient', filters.recipient],
    ['fromemail', filters.fromEmail],
    ['tag', filters.tag],
    ['status', filters.status],
    ['subject', filters.subject],
    ['messagestream', filters.messageStream],
  ];
  for (const [name, value] of optional) if (value !== undefined) query.set(name, value);
  return query;
}

type Parsed = { ok: true; value: unknown } | { ok: false; error: unknown };

function parseJson(text: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, error };
  }
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat === '') return '(empty body)';
  return JSON.stringify(flat.length > 120 ? `${flat.slice(0, 120)}…` : flat);
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause: unknown = error.cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}
