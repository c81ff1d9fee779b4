import { randomBytes } from 'node:crypto';
import type { Scope, SuppressionEvent } from '@sendline/domain';
import {
  hashApiKey,
  type BounceFilters,
  type BounceRecord,
  type BouncesOnDay,
  type SentOnDay,
  type StatsFilters,
  type StoredApiKey,
} from '@sendline/infra';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/app';
import type { Api, ApiDependencies } from '../../src/context';

/**
 * The bounce, statistics and message-source routes mapped onto their readers, and their answers to bad input
 * (Postmark-style 422s, never a 500): the app built on stand-ins that record what reached them.
 */
const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const keys = new Map<string, StoredApiKey>();
let issued = 0;
function issue(scopes: Scope[]): string {
  const token = `sl_live_${randomBytes(32).toString('base64url')}`;
  keys.set(hashApiKey(token), {
    keyId: `key-${++issued}`,
    organizationId: 'org-1',
    name: 'unit',
    mode: 'live',
    scopes,
    revoked: false,
    prefix: token.slice(0, 12),
  });
  return token;
}

const BOUNCE: BounceRecord = {
  bounceId: 0x1234567890abc,
  eventId: '12345678-90ab-5c00-8000-000000000000',
  kind: 'HardBounced',
  messageId: 'm-1',
  recipient: 'gone@example.org',
  bouncedAt: NOW - 60_000,
  tag: 'welcome',
  smtpCode: 550,
  enhancedStatus: '5.1.1',
  smtpResponse: '550 5.1.1 <gone@example.org>: Recipient address rejected: User unknown',
  summary: 'Bad destination mailbox address',
  reportId: '',
  fromEmail: 'sender@example.com',
  fromName: 'Sender',
  subject: 'Hello',
  messageStream: 'outbound',
  inactive: true,
};

/** Mail that came back: a complaint (its address suppressed), an automatic reply, a DSN's delay notice. */
const COMPLAINT: BounceRecord = {
  ...BOUNCE,
  bounceId: 0x2234567890abc,
  eventId: '22345678-90ab-5c00-8000-000000000000',
  kind: 'SpamComplaint',
  recipient: 'angry@example.org',
  smtpCode: 0,
  enhancedStatus: '',
  smtpResponse: '',
  summary: 'Reported as spam (abuse) by the recipient’s provider',
  reportId: 'r-1',
};
const AUTO_REPLY: BounceRecord = {
  ...COMPLAINT,
  bounceId: 0x3234567890abc,
  eventId: '32345678-90ab-5c00-8000-000000000000',
  kind: 'AutoReplied',
  recipient: 'away@example.org',
  summary: 'Out of office until Monday',
  reportId: 'r-2',
  inactive: false,
};
const DELAY: BounceRecord = {
  ...AUTO_REPLY,
  bounceId: 0x4234567890abc,
  eventId: '42345678-90ab-5c00-8000-000000000000',
  kind: 'DelayReported',
  recipient: 'slow@example.org',
  smtpCode: 451,
  enhancedStatus: '4.4.7',
  smtpResponse: 'smtp; 451 4.4.7 Delivery delayed',
  summary: 'Delivery delayed',
  reportId: 'r-3',
};
const ALL_BOUNCES = [BOUNCE, COMPLAINT, AUTO_REPLY, DELAY];
let found: BounceRecord[] = [BOUNCE];

let searched: BounceFilters[] = [];
let statsAsked: StatsFilters[] = [];
let appended: SuppressionEvent[][] = [];
let applied: SuppressionEvent[][] = [];
const sentDays: SentOnDay[] = [
  { date: '2026-11-21', sent: 3 },
  { date: '2026-11-22', sent: 5 },
];
const noBounces = {
  HardBounced: 0,
  SoftBounced: 0,
  PolicyRejected: 0,
  DelayReported: 0,
  AutoReplied: 0,
  SpamComplaint: 0,
};
const bounceDays: BouncesOnDay[] = [
  { date: '2026-11-20', counts: { ...noBounces, AutoReplied: 3 } },
  { date: '2026-11-21', counts: { ...noBounces, SpamComplaint: 1, DelayReported: 2 } },
  { date: '2026-11-22', counts: { ...noBounces, HardBounced: 1, PolicyRejected: 1, SpamComplaint: 1 } },
];
const deps = {
  accounts: { apiKeyByHash: async (hash: string) => keys.get(hash) ?? null },
  suppressions: {
    count: async () => 7,
    apply: async (events: SuppressionEvent[]) => {
      applied.push(events);
    },
  },
  bounces: {
    search: async (_org: string, filters: BounceFilters) => {
      searched.push(filters);
      return { total: found.length, bounces: found };
    },
    byId: async (org: string, id: number) =>
      (org === 'org-1' && ALL_BOUNCES.find((bounce) => bounce.bounceId === id)) || null,
    countsByKind: async () => ({ ...noBounces, HardBounced: 4, PolicyRejected: 2, SpamComplaint: 1, AutoReplied: 3 }),
  },
  stats: {
    sentByDay: async (_org: string, filters: StatsFilters) => {
      statsAsked.push(filters);
      return sentDays;
    },
    bouncesByDay: async () => bounceDays,
  },
  dumps: {
    dump: async (_org: string, id: string) => (id === 'm-1' ? Buffer.from('Subject: Hello\r\n\r\nHi\r\n') : null),
  },
  store: {
    append: async (events: SuppressionEvent[]) => {
      appended.push(events);
    },
  },
  now: () => NOW,
  newId: () => 'id-1',
} as unknown as ApiDependencies;

let app: Api;
let reader: string;
let sender: string;
beforeAll(async () => {
  app = await buildApi(deps);
  reader = issue(['email:read']);
  sender = issue(['email:send']);
});
afterAll(async () => {
  await app?.close();
});
beforeEach(() => {
  found = [BOUNCE];
  searched = [];
  statsAsked = [];
  appended = [];
  applied = [];
});

const get = (url: string, token = reader) =>
  app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });

describe('GET /v1/bounces', () => {
  it('answers Postmark’s bounce fields', async () => {
    const response = await get('/v1/bounces?count=10&offset=0');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      TotalCount: 1,
      Bounces: [
        {
          RecordType: 'Bounce',
          ID: 0x1234567890abc,
          Type: 'HardBounce',
          TypeCode: 1,
          Name: 'Hard bounce',
          Tag: 'welcome',
          MessageID: 'm-1',
          ServerID: 0,
          Description: 'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
          Details: BOUNCE.smtpResponse,
          Email: 'gone@example.org',
          From: 'sender@example.com',
          BouncedAt: new Date(NOW - 60_000).toISOString(),
          DumpAvailable: false,
          Inactive: true,
          CanActivate: true,
          Subject: 'Hello',
          MessageStream: 'outbound',
        },
      ],
    });
  });

  it('passes Postmark’s filters, in the client’s camelCase and the documented lower case', async () => {
    await get(
      '/v1/bounces?count=25&offset=50&type=HardBounce&inactive=true&emailFilter=gone&tag=welcome&messageID=m-1' +
        '&fromDate=2026-11-01&toDate=2026-11-02&messageStream=outbound',
    );
    await get('/v1/bounces?type=blocked&inactive=false&emailfilter=x&messageid=m-2&fromdate=2026-11-01T10:00:00');
    expect(searched).toEqual([
      {
        count: 25,
        offset: 50,
        kinds: ['HardBounced'],
        inactive: true,
        emailContains: 'gone',
        tag: 'welcome',
        messageId: 'm-1',
        fromDate: Date.UTC(2026, 10, 1),
        toDate: Date.UTC(2026, 10, 2, 23, 59, 59, 999),
      },
      {
        count: 100,
        offset: 0,
        kinds: ['PolicyRejected'],
        inactive: false,
        emailContains: 'x',
        messageId: 'm-2',
        fromDate: Date.UTC(2026, 10, 1, 10),
      },
    ]);
  });

  it('selects nothing for a Postmark type it never produces', async () => {
    await get('/v1/bounces?type=SpamNotification');
    expect(searched[0]?.kinds).toEqual([]);
  });

  it('selects what came back by Postmark’s types: SpamComplaint, AutoResponder, Transient (a DSN’s delay notice)', async () => {
    await get('/v1/bounces?type=SpamComplaint');
    await get('/v1/bounces?type=autoresponder');
    await get('/v1/bounces?type=Transient');
    expect(searched.map((filters) => filters.kinds)).toEqual([['SpamComplaint'], ['AutoReplied'], ['DelayReported']]);
  });

  it('answers a complaint as SpamComplaint (its address inactive), an automatic reply and a delay as active', async () => {
    found = [COMPLAINT, AUTO_REPLY, DELAY];
    const bounces = (await get('/v1/bounces')).json().Bounces;
    expect(bounces[0]).toEqual({
      RecordType: 'Bounce',
      ID: COMPLAINT.bounceId,
      Type: 'SpamComplaint',
      TypeCode: 100001,
      Name: 'Spam complaint',
      Tag: 'welcome',
      MessageID: 'm-1',
      ServerID: 0,
      Description: 'The subscriber explicitly marked this message as spam.',
      Details: COMPLAINT.summary,
      Email: 'angry@example.org',
      From: 'sender@example.com',
      BouncedAt: new Date(NOW - 60_000).toISOString(),
      DumpAvailable: false,
      Inactive: true,
      CanActivate: true,
      Subject: 'Hello',
      MessageStream: 'outbound',
    });
    expect(bounces[1]).toMatchObject({
      Type: 'AutoResponder',
      TypeCode: 64,
      Name: 'Auto responder',
      Details: 'Out of office until Monday',
      Inactive: false,
      CanActivate: false,
    });
    expect(bounces[2]).toMatchObject({
      Type: 'Transient',
      TypeCode: 2,
      Name: 'Message delayed',
      Details: 'smtp; 451 4.4.7 Delivery delayed',
      Inactive: false,
    });
  });

  it.each([
    ['count=0', 300],
    ['count=501', 300],
    ['count=abc', 300],
    ['offset=-1', 300],
    ['offset=x', 300],
    ['type=Bouncy', 300],
    ['inactive=maybe', 300],
    ['fromdate=yesterday', 300],
    ['todate=2026-13-01', 300],
    ['messagestream=broadcast', 1235],
  ])('refuses %s with 422, ErrorCode %i', async (query, errorCode) => {
    const response = await get(`/v1/bounces?${query}`);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ ErrorCode: errorCode, Message: expect.any(String) });
    expect(searched).toEqual([]);
  });

  it('needs email:read', async () => {
    expect((await get('/v1/bounces', sender)).statusCode).toBe(403);
  });
});

describe('GET /v1/bounces/{id} and /dump', () => {
  it('answers one bounce, and an empty dump', async () => {
    const one = await get(`/v1/bounces/${BOUNCE.bounceId}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({ ID: BOUNCE.bounceId, Email: 'gone@example.org', Type: 'HardBounce' });
    const dump = await get(`/v1/bounces/${BOUNCE.bounceId}/dump`);
    expect(dump.json()).toEqual({ Body: '' });
  });

  it('answers 404 (ErrorCode 701) for an id the organization has no bounce of', async () => {
    for (const url of ['/v1/bounces/42', '/v1/bounces/42/dump', '/v1/bounces/99999999999999999999']) {
      const response = await get(url);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ ErrorCode: 701, Message: expect.stringContaining('was not found') });
    }
  });

  it('refuses an id that is not an integer (422)', async () => {
    const response = await get('/v1/bounces/abc');
    expect(response.statusCode).toBe(422);
    expect(response.json().ErrorCode).toBe(300);
  });
});

describe('PUT /v1/bounces/{id}/activate', () => {
  const put = (url: string, token: string, payload?: string) =>
    app.inject({
      method: 'PUT',
      url,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(payload !== undefined && { payload }),
    });

  it('deletes the address’s suppression through the suppression decider and answers { Message, Bounce }', async () => {
    const response = await put(`/v1/bounces/${BOUNCE.bounceId}/activate`, sender, '{}');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      Message: 'OK',
      Bounce: { ID: BOUNCE.bounceId, Email: 'gone@example.org', Inactive: false, CanActivate: false },
    });
    expect(appended).toHaveLength(1);
    expect(appended[0]).toMatchObject([
      { type: 'SuppressionDeleted', data: { emailAddress: 'gone@example.org' }, metadata: { organizationId: 'org-1' } },
    ]);
    expect(applied).toEqual(appended);
  });

  it('removes a spam complaint’s suppression the same way', async () => {
    const response = await put(`/v1/bounces/${COMPLAINT.bounceId}/activate`, sender, '{}');
    expect(response.statusCode).toBe(200);
    expect(response.json().Bounce).toMatchObject({ Type: 'SpamComplaint', Inactive: false, CanActivate: false });
    expect(appended).toMatchObject([[{ type: 'SuppressionDeleted', data: { emailAddress: 'angry@example.org' } }]]);
  });

  it('takes an empty body, as Postmark documents', async () => {
    expect((await put(`/v1/bounces/${BOUNCE.bounceId}/activate`, sender, '')).statusCode).toBe(200);
  });

  it('needs email:send, and a bounce of the organization', async () => {
    expect((await put(`/v1/bounces/${BOUNCE.bounceId}/activate`, reader, '{}')).statusCode).toBe(403);
    const unknown = await put('/v1/bounces/42/activate', sender, '{}');
    expect(unknown.statusCode).toBe(404);
    expect(appended).toEqual([]);
  });
});

describe('GET /v1/deliverystats', () => {
  it('counts suppressed addresses and bounces per type, under both spellings', async () => {
    for (const url of ['/v1/deliverystats', '/v1/deliveryStats']) {
      const response = await get(url);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        InactiveMails: 7,
        Bounces: [
          { Name: 'All', Count: 10 },
          { Type: 'HardBounce', Name: 'Hard bounce', Count: 4 },
          { Type: 'Blocked', Name: 'ISP block', Count: 2 },
          { Type: 'AutoResponder', Name: 'Auto responder', Count: 3 },
          { Type: 'SpamComplaint', Name: 'Spam complaint', Count: 1 },
        ],
      });
    }
  });
});

describe('GET /v1/stats/outbound…', () => {
  it('overview: sent, bounced (final failures only), complaints and their rates; what is not tracked is 0', async () => {
    const response = await get('/v1/stats/outbound?tag=welcome&fromdate=2026-11-01&todate=2026-11-30');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      Sent: 8,
      Bounced: 2,
      BounceRate: 25,
      SpamComplaints: 2,
      SpamComplaintsRate: 25,
      SMTPApiErrors: 0,
      Opens: 0,
    });
    expect(statsAsked).toEqual([
      { tag: 'welcome', fromDate: Date.UTC(2026, 10, 1), toDate: Date.UTC(2026, 10, 30, 23, 59, 59, 999) },
    ]);
  });

  it('sends per day', async () => {
    expect((await get('/v1/stats/outbound/sends')).json()).toEqual({
      Days: [
        { Date: '2026-11-21', Sent: 3 },
        { Date: '2026-11-22', Sent: 5 },
      ],
      Sent: 8,
    });
  });

  it('bounces per day and type: delay notices are Transient; a day of automatic replies only is left out', async () => {
    expect((await get('/v1/stats/outbound/bounces')).json()).toEqual({
      Days: [
        { Date: '2026-11-21', HardBounce: 0, SoftBounce: 0, Transient: 2, SMTPApiError: 0, Blocked: 0 },
        { Date: '2026-11-22', HardBounce: 1, SoftBounce: 0, Transient: 0, SMTPApiError: 0, Blocked: 1 },
      ],
      HardBounce: 1,
      SoftBounce: 0,
      Transient: 2,
      SMTPApiError: 0,
      Blocked: 1,
    });
  });

  it('spam complaints per day', async () => {
    expect((await get('/v1/stats/outbound/spam')).json()).toEqual({
      Days: [
        { Date: '2026-11-21', SpamComplaint: 1 },
        { Date: '2026-11-22', SpamComplaint: 1 },
      ],
      SpamComplaint: 2,
    });
  });

  it.each(['/v1/stats/outbound', '/v1/stats/outbound/sends', '/v1/stats/outbound/bounces', '/v1/stats/outbound/spam'])(
    '%s refuses a bad date (300) and another stream (1235) with 422',
    async (url) => {
      const badDate = await get(`${url}?fromdate=2026-02-31x`);
      expect(badDate.statusCode).toBe(422);
      expect(badDate.json().ErrorCode).toBe(300);
      const stream = await get(`${url}?messagestream=broadcast`);
      expect(stream.statusCode).toBe(422);
      expect(stream.json().ErrorCode).toBe(1235);
    },
  );
});

describe('GET /v1/messages/outbound/{id}/dump', () => {
  it('answers the source as Body, and 404 (ErrorCode 701) for an unknown message', async () => {
    expect((await get('/v1/messages/outbound/m-1/dump')).json()).toEqual({ Body: 'Subject: Hello\r\n\r\nHi\r\n' });
    const unknown = await get('/v1/messages/outbound/m-2/dump');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().ErrorCode).toBe(701);
  });
});

describe('the OpenAPI document', () => {
  it.each([
    ['/v1/bounces', 'get', ['200', '401', '403', '422', '503']],
    ['/v1/bounces/{bounceId}', 'get', ['200', '401', '403', '404', '422', '503']],
    ['/v1/bounces/{bounceId}/dump', 'get', ['200', '401', '403', '404', '422', '503']],
    ['/v1/bounces/{bounceId}/activate', 'put', ['200', '401', '403', '404', '415', '422', '503']],
    ['/v1/deliverystats', 'get', ['200', '401', '403', '503']],
    ['/v1/stats/outbound', 'get', ['200', '401', '403', '422', '503']],
    ['/v1/stats/outbound/sends', 'get', ['200', '401', '403', '422', '503']],
    ['/v1/stats/outbound/bounces', 'get', ['200', '401', '403', '422', '503']],
    ['/v1/stats/outbound/spam', 'get', ['200', '401', '403', '422', '503']],
    ['/v1/messages/outbound/{messageId}/dump', 'get', ['200', '401', '403', '404', '503']],
  ])('documents %s (%s) with every status it answers', async (path, method, statuses) => {
    const document = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    expect(Object.keys(document.paths[path]?.[method]?.responses ?? {})).toEqual(statuses);
  });
});
