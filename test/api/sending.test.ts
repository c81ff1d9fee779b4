import { randomUUID } from 'node:crypto';
import { decideSuppression, initialSuppressionState, type SuppressionEvent } from '@sendline/domain';
import { InfrastructureError, type EventStore } from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { eventsOfMessage } from '../support/events';
import { call } from '../support/http';

let api: TestApi;
let org: TestOrganization;

beforeAll(async () => {
  api = await startTestApi();
  org = await createTestOrganization(api.deps);
});
afterAll(async () => {
  await api?.close();
});

const send = (body: unknown, key = org.liveKey, headers: Record<string, string> = {}) =>
  call(api.baseUrl, 'POST', '/email', { key, body, headers });

const message = (overrides: Record<string, unknown> = {}) => ({
  From: `Sender <sender@${org.domain}>`,
  To: `to-${randomUUID().slice(0, 8)}@example.net`,
  Subject: 'Hello',
  TextBody: 'Hello there',
  ...overrides,
});

async function suppress(address: string) {
  const events = decideSuppression(
    {
      type: 'AddSuppression',
      data: { emailAddress: address, reason: 'ManualSuppression', origin: 'Customer' },
      metadata: { organizationId: org.organizationId, now: Date.now(), eventIds: [randomUUID()] },
    },
    initialSuppressionState(),
  ) as SuppressionEvent[];
  await api.deps.store.append(events);
  await api.deps.suppressions.apply(events);
}

describe('POST /v1/email with a live key', () => {
  it('answers 200 with ErrorCode 0 only after MessageAccepted is in Kafka', async () => {
    const response = await send(message({ Cc: 'cc@example.net' }));
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ ErrorCode: 0, Message: 'OK', Cc: 'cc@example.net' });
    expect(response.body.MessageID).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.body.SubmittedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const events = await eventsOfMessage(api.deps.store, response.body.MessageID);
    expect(events.map((e) => e.type)).toEqual(['MessageAccepted']);
    expect(events[0]?.metadata.organizationId).toBe(org.organizationId);
  });

  it('queues only the active recipients when some are suppressed', async () => {
    const suppressed = `gone-${randomUUID().slice(0, 8)}@example.net`;
    await suppress(suppressed);
    const active = `here-${randomUUID().slice(0, 8)}@example.net`;
    const response = await send(message({ To: `${active}, ${suppressed.toUpperCase()}` }));
    expect(response.status).toBe(200);
    expect(response.body.ErrorCode).toBe(0);
    expect(response.body.Message).toBe(`OK. Not sent to suppressed recipients: ${suppressed}.`);
    const [accepted] = await eventsOfMessage(api.deps.store, response.body.MessageID);
    expect((accepted?.data as { activeRecipients: string[] }).activeRecipients).toEqual([active]);
  });

  it('refuses with 422 / ErrorCode 406 when every recipient is suppressed, naming them as Postmark does', async () => {
    const a = `a-${randomUUID().slice(0, 8)}@example.net`;
    const b = `b-${randomUUID().slice(0, 8)}@example.net`;
    await suppress(a);
    await suppress(b);
    const response = await send(message({ To: a, Cc: b }));
    expect(response.status).toBe(422);
    expect(response.body.ErrorCode).toBe(406);
    expect(response.body.Message).toContain(`Found inactive addresses: ${a}, ${b}. Inactive`);
  });

  it('refuses a From on a domain the organization does not have (ErrorCode 400)', async () => {
    const response = await send(message({ From: 'someone@not-ours.example' }));
    expect(response.status).toBe(422);
    expect(response.body.ErrorCode).toBe(400);
  });

  it('refuses a From on a domain that is not verified yet (ErrorCode 401)', async () => {
    const other = await createTestOrganization(api.deps);
    await other.run({
      type: 'AddDomain',
      data: {
        domain: `unverified-${randomUUID().slice(0, 6)}.example.test`,
        verificationToken: 'a'.repeat(32),
        dkimSelector: 'sl1',
        dkimPublicKey: (await api.deps.accounts.domain(other.organizationId, other.domain))!.dkimPublicKey,
        dkimPrivateKeyEncrypted: 'v1.x.y.z',
        returnPathLabel: 'bounces',
      },
    });
    const domains = [...(await api.deps.accounts.domains(other.organizationId)).keys()];
    const unverified = domains.find((d) => d.startsWith('unverified-'))!;
    const response = await send(message({ From: `x@${unverified}` }), other.liveKey);
    expect(response.status).toBe(422);
    expect(response.body.ErrorCode).toBe(401);
  });
});

describe('POST /v1/email with a test key', () => {
  it('runs the checks, answers "Test job accepted" and queues nothing', async () => {
    const response = await send(message(), org.testKey);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ ErrorCode: 0, Message: 'Test job accepted' });
    expect(await eventsOfMessage(api.deps.store, response.body.MessageID)).toEqual([]);
  });

  it('still refuses an invalid request', async () => {
    const response = await send(message({ To: 'not an address' }), org.testKey);
    expect(response.status).toBe(422);
    expect(response.body.ErrorCode).toBe(300);
  });
});

describe('the allowance', () => {
  it('refuses with ErrorCode 405 once the month is used up, and does not count suppressed recipients', async () => {
    const small = await createTestOrganization(api.deps, { allowance: 2 });
    const gone = `gone-${randomUUID().slice(0, 8)}@example.net`;
    const events = decideSuppression(
      {
        type: 'AddSuppression',
        data: { emailAddress: gone, reason: 'ManualSuppression', origin: 'Admin' },
        metadata: { organizationId: small.organizationId, now: Date.now(), eventIds: [randomUUID()] },
      },
      initialSuppressionState(),
    ) as SuppressionEvent[];
    await api.deps.store.append(events);
    await api.deps.suppressions.apply(events);
    const m = (to: string) => ({ From: `s@${small.domain}`, To: to, TextBody: 'x' });

    // A test key checks the allowance but uses none of it.
    expect((await send(m('t@example.net'), small.testKey)).body.ErrorCode).toBe(0);
    expect((await send(m(`one@example.net, ${gone}`), small.liveKey)).body.ErrorCode).toBe(0);
    expect((await send(m('two@example.net'), small.liveKey)).body.ErrorCode).toBe(0);
    const refused = await send(m('three@example.net'), small.liveKey);
    expect(refused.status).toBe(422);
    expect(refused.body.ErrorCode).toBe(405);
  });
});

describe('authentication and scopes', () => {
  it('accepts the key in X-Postmark-Server-Token as well as in Authorization: Bearer', async () => {
    const response = await call(api.baseUrl, 'POST', '/email', {
      body: message(),
      headers: { 'X-Postmark-Server-Token': org.liveKey },
    });
    expect(response.status).toBe(200);
  });

  it.each([
    ['no key', {}],
    ['an unknown key', { Authorization: `Bearer sl_live_${'x'.repeat(40)}` }],
    ['a malformed key', { Authorization: 'Bearer hello' }],
    ['a Postmark token', { 'X-Postmark-Server-Token': randomUUID() }],
  ])('answers 401 with ErrorCode 10 for %s', async (_, headers) => {
    const response = await call(api.baseUrl, 'POST', '/email', { body: message(), headers });
    expect(response.status).toBe(401);
    expect(response.body.ErrorCode).toBe(10);
  });

  it('answers 401 to a revoked key', async () => {
    const { token, keyId } = await org.issueKey(['email:send']);
    expect((await send(message(), token)).status).toBe(200);
    await org.run({ type: 'RevokeApiKey', data: { keyId } });
    const response = await send(message(), token);
    expect(response.status).toBe(401);
    expect(response.body.ErrorCode).toBe(10);
  });

  it('answers 403 to a key without the route’s scope, naming the scope', async () => {
    const { token } = await org.issueKey(['email:read']);
    const response = await send(message(), token);
    expect(response.status).toBe(403);
    expect(response.body.Message).toContain('email:send');
  });
});

describe('bad input gets a Postmark-style error, never a 500', () => {
  it.each<[string, () => Promise<{ status: number; body: any }>, number, number]>([
    ['malformed JSON', () => call(api.baseUrl, 'POST', '/email', { key: org.liveKey, rawBody: '{"From": ' }), 422, 402],
    ['an empty body', () => call(api.baseUrl, 'POST', '/email', { key: org.liveKey, rawBody: '' }), 422, 402],
    [
      'a wrong Content-Type',
      () =>
        call(api.baseUrl, 'POST', '/email', {
          key: org.liveKey,
          rawBody: 'From=x',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        }),
      415,
      409,
    ],
    ['a body that is not an object', () => send([1, 2]), 422, 300],
    ['To of the wrong type', () => send(message({ To: 5 })), 422, 300],
    ['an invalid address', () => send(message({ To: 'bob' })), 422, 300],
    ['no body at all', () => send(message({ TextBody: undefined })), 422, 300],
    [
      'a CR/LF in a header value',
      () => send(message({ Headers: [{ Name: 'X-Test', Value: 'a\r\nBcc: evil@example.net' }] })),
      422,
      300,
    ],
    ['a CR/LF in the Subject', () => send(message({ Subject: 'Hi\r\nBcc: evil@example.net' })), 422, 300],
    [
      'too many recipients',
      () => send(message({ To: Array.from({ length: 51 }, (_, i) => `r${i}@example.net`).join(', ') })),
      422,
      300,
    ],
    ['an unknown message stream', () => send(message({ MessageStream: 'broadcast' })), 422, 1235],
    [
      'a forbidden attachment type',
      () =>
        send(message({ Attachments: [{ Name: 'run.exe', Content: 'TVqQ', ContentType: 'application/octet-stream' }] })),
      422,
      411,
    ],
  ])('%s', async (_, request, status, errorCode) => {
    const response = await request();
    expect(response.status).toBe(status);
    expect(response.body.ErrorCode).toBe(errorCode);
    expect(typeof response.body.Message).toBe('string');
    expect(response.body.Message.length).toBeGreaterThan(5);
  });

  it('an oversized body gets 413 with a Postmark-style error', async () => {
    const response = await send(message({ TextBody: 'x'.repeat(16 * 1024 * 1024) }));
    expect(response.status).toBe(413);
    expect(response.body.ErrorCode).toBe(300);
  });
});

describe('POST /v1/email/batch', () => {
  it('answers one result per message, in order; a refused message never fails the others', async () => {
    const response = await call(api.baseUrl, 'POST', '/email/batch', {
      key: org.liveKey,
      body: [
        message({ To: 'one@example.net' }),
        message({ To: 'not-an-address' }),
        'garbage',
        message({ To: 'three@example.net' }),
      ],
    });
    expect(response.status).toBe(200);
    expect(response.body.map((r: { ErrorCode: number }) => r.ErrorCode)).toEqual([0, 300, 403, 0]);
    expect(response.body[0].To).toBe('one@example.net');
    expect(response.body[3].To).toBe('three@example.net');
    const events = await eventsOfMessage(api.deps.store, response.body[3].MessageID);
    expect(events.map((e) => e.type)).toEqual(['MessageAccepted']);
  });

  it('refuses more than 500 messages with ErrorCode 410', async () => {
    const response = await call(api.baseUrl, 'POST', '/email/batch', {
      key: org.liveKey,
      body: Array.from({ length: 501 }, () => message()),
    });
    expect(response.status).toBe(422);
    expect(response.body.ErrorCode).toBe(410);
  });

  it('refuses a body that is not an array', async () => {
    const response = await call(api.baseUrl, 'POST', '/email/batch', { key: org.liveKey, body: message() });
    expect(response.status).toBe(422);
    expect(response.body.ErrorCode).toBe(300);
  });
});

describe('Idempotency-Key', () => {
  it('returns the first answer again for the same key and body, and queues nothing new', async () => {
    const key = randomUUID();
    const body = message();
    const first = await send(body, org.liveKey, { 'Idempotency-Key': key });
    const second = await send(body, org.liveKey, { 'Idempotency-Key': key });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const accepted = await eventsOfMessage(api.deps.store, first.body.MessageID);
    expect(accepted).toHaveLength(1);
  });

  it('refuses the same key with another body (409, ErrorCode 1300)', async () => {
    const key = randomUUID();
    await send(message(), org.liveKey, { 'Idempotency-Key': key });
    const response = await send(message({ Subject: 'different' }), org.liveKey, { 'Idempotency-Key': key });
    expect(response.status).toBe(409);
    expect(response.body.ErrorCode).toBe(1300);
  });

  it('a retry after a 503 whose append had in fact landed carries the same MessageID, time and event', async () => {
    // The API in front of the real Kafka, whose first append lands and then reports a timeout (as when
    // the broker acknowledges after the API gave up): the caller sees a 503 and retries with the same key.
    let failNext = true;
    const flaky = new Proxy(api.deps.store, {
      get(target, property, receiver) {
        if (property !== 'append') return Reflect.get(target, property, receiver) as unknown;
        return async (events: Parameters<EventStore['append']>[0]) => {
          await target.append(events);
          if (failNext) {
            failNext = false;
            throw new InfrastructureError('AppendTimeout', 'Kafka did not acknowledge in time', { retriable: true });
          }
        };
      },
    });
    const faulty = await startTestApi({ store: flaky });
    try {
      const key = randomUUID();
      const body = message();
      const first = await call(faulty.baseUrl, 'POST', '/email', {
        key: org.liveKey,
        body,
        headers: { 'Idempotency-Key': key },
      });
      expect(first.status).toBe(503);
      const retried = await send(body, org.liveKey, { 'Idempotency-Key': key });
      expect(retried.status).toBe(200);
      const messageId = retried.body.MessageID as string;
      const events = await eventsOfMessage(api.deps.store, messageId);
      // Two appends of the very same event: every consumer takes the second for the first.
      expect(events.map((event) => event.type)).toEqual(['MessageAccepted', 'MessageAccepted']);
      expect(events[1]).toEqual(events[0]);
      expect(new Date(events[0]!.metadata.occurredAt).toISOString()).toBe(retried.body.SubmittedAt);
    } finally {
      await faulty.close();
    }
  });

  it('gives requests with one key that run at the same time the same MessageID', async () => {
    const key = randomUUID();
    const body = message();
    const answers = await Promise.all([1, 2, 3].map(() => send(body, org.liveKey, { 'Idempotency-Key': key })));
    for (const answer of answers) expect(answer.status).toBe(200);
    expect(new Set(answers.map((answer) => answer.body.MessageID)).size).toBe(1);
  });

  it('derives different MessageIDs for different keys, and for each message of a batch', async () => {
    const body = message();
    const a = await send(body, org.liveKey, { 'Idempotency-Key': randomUUID() });
    const b = await send(body, org.liveKey, { 'Idempotency-Key': randomUUID() });
    expect(a.body.MessageID).not.toBe(b.body.MessageID);
    const batch = await call(api.baseUrl, 'POST', '/email/batch', {
      key: org.liveKey,
      body: [body, body],
      headers: { 'Idempotency-Key': randomUUID() },
    });
    expect(batch.body[0].MessageID).not.toBe(batch.body[1].MessageID);
  });

  it('works on batches', async () => {
    const key = randomUUID();
    const body = [message(), message()];
    const first = await call(api.baseUrl, 'POST', '/email/batch', {
      key: org.liveKey,
      body,
      headers: { 'Idempotency-Key': key },
    });
    const again = await call(api.baseUrl, 'POST', '/email/batch', {
      key: org.liveKey,
      body,
      headers: { 'Idempotency-Key': key },
    });
    expect(again.body).toEqual(first.body);
  });
});
