import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client, ClientError, DEFAULT_TIMEOUT_MS, SendlineError } from '../src';
import type { ClientOptions, EmailMessage } from '../src';
import { parseRetryAfter } from '../src/errors';
import { BASE, fakeFetch, hangingFetch, json } from './fake-fetch';

const KEY = 'sl_live_abc123';
const message: EmailMessage = { from: 'me@example.com', to: 'ann@example.org', subject: 'Hi', textBody: 'Hello' };
const sendAnswer = {
  To: 'ann@example.org',
  SubmittedAt: '2030-01-01T00:00:00.000Z',
  MessageID: 'id-1',
  ErrorCode: 0,
  Message: 'OK',
};

async function failure(promise: Promise<unknown>): Promise<SendlineError> {
  const outcome = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(outcome instanceof SendlineError)) throw new Error(`expected a SendlineError, got ${String(outcome)}`);
  return outcome;
}

afterEach(() => {
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('the API key', () => {
  it('without a key or SENDLINE_API_KEY the constructor succeeds and the first call fails with missing_api_key', async () => {
    vi.stubEnv('SENDLINE_API_KEY', undefined);
    const fake = fakeFetch(() => json(sendAnswer));
    const client = new Client(undefined, { baseUrl: BASE, fetch: fake.fetch });
    const error = await failure(client.emails.send(message));
    expect(error.code).toBe('missing_api_key');
    expect(error.status).toBe(0);
    expect(error.retryAfter).toBeNull();
    expect(error.message).toContain('SENDLINE_API_KEY');
    expect(fake.requests).toHaveLength(0);
  });

  it('reads SENDLINE_API_KEY from the environment when no key is passed', async () => {
    vi.stubEnv('SENDLINE_API_KEY', 'sl_live_from_env');
    const fake = fakeFetch(() => json({ domains: [] }));
    await new Client(undefined, { baseUrl: BASE, fetch: fake.fetch }).domains.list();
    expect(fake.requests[0]!.headers.Authorization).toBe('Bearer sl_live_from_env');
  });

  it('prefers the key passed to the constructor over the environment', async () => {
    vi.stubEnv('SENDLINE_API_KEY', 'sl_live_from_env');
    const fake = fakeFetch(() => json({ domains: [] }));
    await new Client(KEY, { baseUrl: BASE, fetch: fake.fetch }).domains.list();
    expect(fake.requests[0]!.headers.Authorization).toBe(`Bearer ${KEY}`);
  });
});

describe('the error class', () => {
  it('is one class, also exported as ClientError, and an Error with a name', async () => {
    vi.stubEnv('SENDLINE_API_KEY', '');
    const error = await failure(new Client(undefined, { fetch: fakeFetch(() => json({})).fetch }).me());
    expect(ClientError).toBe(SendlineError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('SendlineError');
  });
});

describe('when no HTTP response arrives', () => {
  it('a rejected fetch is network_error with status 0 and the cause, tried once', async () => {
    const cause = new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:443') });
    let calls = 0;
    const client = new Client(KEY, {
      baseUrl: BASE,
      fetch: () => {
        calls++;
        return Promise.reject(cause);
      },
    });
    const error = await failure(client.emails.send(message));
    expect(error.code).toBe('network_error');
    expect(error.status).toBe(0);
    expect(error.cause).toBe(cause);
    expect(error.message).toContain('ECONNREFUSED');
    expect(calls).toBe(1);
  });

  it('a request that outlives timeoutMs is aborted with timeout, status 0, and a send says the outcome is unknown', async () => {
    const hanging = hangingFetch();
    const client = new Client(KEY, { baseUrl: BASE, fetch: hanging.fetch, timeoutMs: 20 });
    const error = await failure(client.emails.send(message, { idempotencyKey: 'k-1' }));
    expect(error.code).toBe('timeout');
    expect(error.status).toBe(0);
    expect(error.message).toMatch(/timed out after 20 ms/);
    expect(error.message).toMatch(/outcome is unknown/);
    expect(error.message).toMatch(/same idempotency key/);
    expect(hanging.calls).toHaveLength(1);
    expect(hanging.calls[0]!.signal?.aborted).toBe(true);
  });

  it('times out after 30 seconds by default', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const hanging = hangingFetch();
    const outcome = failure(new Client(KEY, { baseUrl: BASE, fetch: hanging.fetch }).domains.list());
    let settled = false;
    void outcome.finally(() => (settled = true));
    expect(DEFAULT_TIMEOUT_MS).toBe(30_000);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const error = await outcome;
    expect(error.code).toBe('timeout');
    expect(error.message).not.toMatch(/outcome is unknown/); // a GET is safe to repeat
  });

  it('timeoutMs 0 disables the timer: the request waits as long as the server takes', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let answer: (response: Response) => void = () => {};
    let signal: AbortSignal | undefined;
    const client = new Client(KEY, {
      baseUrl: BASE,
      timeoutMs: 0,
      fetch: (_url, init) => {
        signal = init.signal;
        return new Promise<Response>((resolve) => (answer = resolve));
      },
    });
    let settled = false;
    const pending = client.domains.list().finally(() => (settled = true));
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(settled).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    expect(signal).toBeUndefined();
    answer(json({ domains: [] }));
    await expect(pending).resolves.toEqual([]);
  });

  it('clears its timer once the answer is read', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const client = new Client(KEY, { baseUrl: BASE, fetch: fakeFetch(() => json({ domains: [] })).fetch });
    await client.domains.list();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('refuses a negative or non-numeric timeoutMs at construction', () => {
    expect(() => new Client(KEY, { timeoutMs: -1 })).toThrow(TypeError);
    expect(() => new Client(KEY, { timeoutMs: Number.NaN })).toThrow(TypeError);
  });
});

describe('when the API answers with an error', () => {
  const clientAnswering = (response: () => Response) => {
    const fake = fakeFetch(response);
    return { client: new Client(KEY, { baseUrl: BASE, fetch: fake.fetch }), requests: fake.requests };
  };

  it('401 is http_error with the status, the ErrorCode and the Message', async () => {
    const { client } = clientAnswering(() => json({ ErrorCode: 10, Message: 'Bad or missing API key.' }, 401));
    const error = await failure(client.me());
    expect(error).toMatchObject({
      code: 'http_error',
      status: 401,
      errorCode: 10,
      message: 'Bad or missing API key.',
      retryAfter: null,
    });
  });

  it('422 with ErrorCode 406 keeps the inactive addresses in the message', async () => {
    const text =
      'You tried to send to recipient(s) that have been marked as inactive. Found inactive addresses: ann@example.org. Inactive recipients are ones that have generated a hard bounce, a spam complaint, or a manual suppression.';
    const { client } = clientAnswering(() => json({ ErrorCode: 406, Message: text }, 422));
    const error = await failure(client.emails.send(message));
    expect(error).toMatchObject({ code: 'http_error', status: 422, errorCode: 406, message: text });
  });

  it('429 with Retry-After in seconds gives retryAfter, and the client does not retry', async () => {
    const { client, requests } = clientAnswering(() =>
      json({ ErrorCode: 429, Message: 'Rate limit exceeded.' }, 429, { 'Retry-After': '7' }),
    );
    const error = await failure(client.emails.send(message, { idempotencyKey: 'k-2' }));
    expect(error).toMatchObject({ code: 'http_error', status: 429, errorCode: 429, retryAfter: 7 });
    expect(requests).toHaveLength(1);
  });

  it('429 with Retry-After as an HTTP date gives the seconds from now', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2030-01-01T00:00:00.000Z'));
    const { client } = clientAnswering(() =>
      json({ ErrorCode: 429, Message: 'Rate limit exceeded.' }, 429, {
        'Retry-After': 'Tue, 01 Jan 2030 00:02:00 GMT',
      }),
    );
    const error = await failure(client.emails.send(message));
    expect(error).toMatchObject({ code: 'http_error', status: 429, retryAfter: 120 });
  });

  it('an error body in lower-case JSON (as a framework writes it) still gives its message', async () => {
    const { client } = clientAnswering(() =>
      json({ statusCode: 415, error: 'Unsupported Media Type', message: 'Unsupported Media Type: text/plain' }, 415),
    );
    const error = await failure(client.me());
    expect(error).toMatchObject({
      code: 'http_error',
      status: 415,
      errorCode: null,
      message: 'Unsupported Media Type: text/plain',
    });
  });

  it('a 503 with an HTML body is invalid_response with the status and retryAfter kept', async () => {
    const { client, requests } = clientAnswering(
      () => new Response('<html>Service Unavailable</html>', { status: 503, headers: { 'Retry-After': '30' } }),
    );
    const error = await failure(client.emails.send(message));
    expect(error).toMatchObject({ code: 'invalid_response', status: 503, retryAfter: 30, errorCode: null });
    expect(error.message).toContain('Service Unavailable');
    expect(requests).toHaveLength(1);
  });
});

describe('when a 2xx answer is unusable', () => {
  it('a non-JSON body is invalid_response', async () => {
    const client = new Client(KEY, { baseUrl: BASE, fetch: async () => new Response('OK', { status: 200 }) });
    const error = await failure(client.emails.send(message));
    expect(error.code).toBe('invalid_response');
    expect(error.status).toBe(200);
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it('an empty body is invalid_response', async () => {
    const client = new Client(KEY, { baseUrl: BASE, fetch: async () => new Response(null, { status: 204 }) });
    const error = await failure(client.suppressions.list());
    expect(error).toMatchObject({ code: 'invalid_response', status: 204 });
  });

  it('a send result without MessageID is invalid_response naming the field', async () => {
    const { MessageID: _dropped, ...withoutId } = sendAnswer;
    const client = new Client(KEY, { baseUrl: BASE, fetch: fakeFetch(() => json(withoutId)).fetch });
    const error = await failure(client.emails.send(message));
    expect(error.code).toBe('invalid_response');
    expect(error.message).toContain('MessageID');
  });
});

describe('the default fetch', () => {
  it('is the global fetch, looked up when a request is made', async () => {
    const fake = fakeFetch(() => json({ domains: [] }));
    const client = new Client(KEY, { baseUrl: BASE });
    vi.stubGlobal('fetch', fake.fetch);
    await client.domains.list();
    expect(fake.requests).toHaveLength(1);
  });

  it('the global fetch type is accepted as options.fetch', async () => {
    const fake = fakeFetch(() => json({ domains: [] }));
    vi.stubGlobal('fetch', fake.fetch);
    const options: ClientOptions = { baseUrl: BASE, fetch: globalThis.fetch };
    await new Client(KEY, options).domains.list();
    expect(fake.requests).toHaveLength(1);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2030-01-01T00:00:00.000Z');
  it.each([
    ['0', 0],
    ['120', 120],
    [' 5 ', 5],
    ['Tue, 01 Jan 2030 00:00:30 GMT', 30],
    ['Mon, 31 Dec 2029 23:59:00 GMT', 0], // already past
    ['1.5', null],
    ['-3', null],
    ['soon', null],
    ['', null],
  ])('%j → %j', (header, expected) => {
    expect(parseRetryAfter(header, now)).toBe(expected);
  });

  it('no header → null', () => {
    expect(parseRetryAfter(null, now)).toBeNull();
  });
});
