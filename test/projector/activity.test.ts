import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageAccepted, MessageEvent } from '@sendline/domain';
import {
  ActivityQueries,
  activityFingerprints,
  bounceIdOf,
  ClickHouseActivityReader,
  ClickHouseBounceReader,
  ClickHouseActivityWriter,
  type ActivityFlushStats,
  type ClickHouseClient,
} from '@sendline/infra';
import {
  accepted,
  deferred,
  delivered,
  expectedStatus,
  freshActivityDatabase,
  hardBounced,
  policyRejected,
  returned,
  RETURNED,
  sent,
  softBounced,
} from './support';

const HOUR = 3600_000;

describe('the activity store (ClickHouse)', () => {
  let client: ClickHouseClient;
  let database: string;
  let drop: () => Promise<void>;
  let reader: ClickHouseActivityReader;
  let writer: ClickHouseActivityWriter;
  const count = async (sql: string) =>
    Number((await (await client.query({ query: sql, format: 'JSONEachRow' })).json<{ n: string }>())[0]!.n);

  beforeAll(async () => {
    ({ client, database, drop } = await freshActivityDatabase());
    reader = new ClickHouseActivityReader(client, database);
    writer = new ClickHouseActivityWriter(client, database, { maxDelayMs: 50 });
  });
  afterAll(async () => {
    await writer.close();
    await drop();
  });

  const write = (events: MessageEvent[], into = writer) => into.write(events.map((event) => ({ event })));
  const listAll = (org: string, filters: Record<string, unknown> = {}) =>
    reader.list(org, { count: 500, offset: 0, ...filters });
  const statusOf = async (org: string, message: MessageAccepted) =>
    (await reader.details(org, message.data.messageId))?.status;

  describe('a message’s listing status follows the domain’s deriveMessageStatus', () => {
    const org = randomUUID();
    const cases: [string, (m: MessageAccepted) => MessageEvent[]][] = [
      ['accepted only', () => []],
      ['sent, no outcome yet', (m) => [sent(m)]],
      ['sent, one deferred', (m) => [sent(m), deferred(m, 'ann@example.net')]],
      [
        'deferred twice, then delivered',
        (m) => [
          sent(m),
          deferred(m, 'ann@example.net'),
          deferred(m, 'ann@example.net', 2, m.data.submittedAt + 600),
          delivered(m, 'ann@example.net'),
          delivered(m, 'bob@example.net'),
        ],
      ],
      [
        'one delivered, one hard bounce',
        (m) => [sent(m), delivered(m, 'ann@example.net'), hardBounced(m, 'bob@example.net')],
      ],
      ['hard and soft bounces', (m) => [sent(m), softBounced(m, 'ann@example.net'), hardBounced(m, 'bob@example.net')]],
      [
        'both policy-rejected',
        (m) => [sent(m), policyRejected(m, 'ann@example.net'), policyRejected(m, 'bob@example.net')],
      ],
      ['one delivered, one still queued', (m) => [sent(m), delivered(m, 'ann@example.net')]],
      [
        'a late deferral after delivery changes nothing',
        (m) => [
          sent(m),
          delivered(m, 'ann@example.net'),
          delivered(m, 'bob@example.net'),
          deferred(m, 'bob@example.net', 1, m.data.submittedAt + 5000),
        ],
      ],
    ];
    for (const [name, outcomes] of cases) {
      it(name, async () => {
        const message = accepted(org, { to: ['Ann@Example.net'], cc: ['bob@example.net'] });
        const events = [message, ...outcomes(message)];
        // Each event in its own flush, the way they arrive live.
        for (const event of events) await write([event]);
        const expected = expectedStatus(events);
        expect(await statusOf(org, message)).toBe(expected);
        const listed = await listAll(org);
        expect(listed.messages.find((m) => m.messageId === message.data.messageId)?.status).toBe(expected);
      });
    }
  });

  it('lists what the MessageAccepted said, newest first, with the total', async () => {
    const org = randomUUID();
    const now = Date.now();
    const older = accepted(org, {
      at: now - 2 * HOUR,
      to: ['ann@example.net'],
      subject: 'Older',
      metadata: { a: '1', b: 'two' },
    });
    const newer = accepted(org, {
      at: now - HOUR,
      to: ['Zed@Example.net'],
      cc: ['Zoe@example.net'],
      bcc: ['audit@example.net'],
      suppressed: ['zoe@example.net'],
      subject: 'Newer',
      tag: '',
    });
    await write([older, newer]);
    const { total, messages } = await listAll(org);
    expect(total).toBe(2);
    expect(messages.map((m) => m.messageId)).toEqual([newer.data.messageId, older.data.messageId]);
    expect(messages[1]).toEqual({
      messageId: older.data.messageId,
      receivedAt: older.data.submittedAt,
      fromEmail: 'sender@example.test',
      fromName: 'Sender',
      subject: 'Older',
      tag: 'receipts',
      messageStream: 'outbound',
      to: [{ email: 'ann@example.net', name: '' }],
      cc: [],
      bcc: [],
      recipients: ['ann@example.net'],
      attachmentNames: [],
      status: 'Queued',
      trackOpens: false,
      trackLinks: 'None',
      metadata: { a: '1', b: 'two' },
    });
    expect(messages[0]!.bcc).toEqual([{ email: 'audit@example.net', name: '' }]);
    expect(messages[0]!.recipients).toEqual(['zed@example.net', 'audit@example.net']);
    // A suppressed recipient was not sent to, yet searching by it finds the message.
    expect((await listAll(org, { recipient: 'ZOE@example.net' })).messages.map((m) => m.messageId)).toEqual([
      newer.data.messageId,
    ]);
  });

  it('keeps every character: quotes, backslashes, tabs, line breaks, NUL, non-ASCII', async () => {
    const org = randomUUID();
    const odd = `it's a "test" \\ back\\slash\ttab\nnew line\r\u0000 ünï 🚀 [a,'b'] ; DROP TABLE x`;
    const m = accepted(org, {
      to: ["o'brien@example.net"],
      subject: odd,
      tag: odd,
      fromName: odd,
      textBody: `line 1\nline 2\t${odd}`,
      metadata: { [odd.slice(0, 20)]: odd.slice(0, 80) },
    });
    await write([m]);
    const details = await reader.details(org, m.data.messageId);
    expect(details).toMatchObject({
      subject: odd,
      tag: odd,
      fromName: odd,
      textBody: `line 1\nline 2\t${odd}`,
      metadata: { [odd.slice(0, 20)]: odd.slice(0, 80) },
      recipients: ["o'brien@example.net"],
    });
    expect((await listAll(org, { tag: odd, recipient: "O'Brien@example.net" })).total).toBe(1);
  });

  describe('list filters', () => {
    const org = randomUUID();
    const base = Date.UTC(2026, 10, 20, 12, 0, 0);
    let receipt: MessageAccepted, welcome: MessageAccepted, bounced: MessageAccepted, queued: MessageAccepted;
    beforeAll(async () => {
      receipt = accepted(org, {
        at: base,
        to: ['Ann@Example.net'],
        subject: 'Your Receipt #1',
        tag: 'receipts',
        from: 'billing@shop.test',
      });
      welcome = accepted(org, {
        at: base + HOUR,
        to: ['bob@example.net'],
        cc: ['Carol@Example.net'],
        subject: 'Welcome aboard',
        tag: 'welcome',
        from: 'hello@shop.test',
      });
      bounced = accepted(org, {
        at: base + 2 * HOUR,
        to: ['dan@example.net'],
        subject: 'Ünïcode RECEIPT',
        tag: 'receipts',
        from: 'billing@shop.test',
        suppressed: [],
        bcc: ['Erin@example.net'],
      });
      queued = accepted(org, {
        at: base + 3 * HOUR,
        to: ['fay@example.net'],
        subject: 'Later',
        tag: 'other',
        from: 'Billing@Shop.test',
      });
      await write([
        receipt,
        sent(receipt),
        delivered(receipt, 'ann@example.net'),
        welcome,
        sent(welcome),
        delivered(welcome, 'bob@example.net'),
        delivered(welcome, 'carol@example.net'),
        bounced,
        sent(bounced),
        hardBounced(bounced, 'dan@example.net'),
        softBounced(bounced, 'erin@example.net'),
        queued,
      ]);
    });
    const ids = async (filters: Record<string, unknown>) => {
      const result = await listAll(org, filters);
      expect(result.total).toBe(result.messages.length);
      return result.messages.map((m) => m.messageId);
    };

    it('recipient: any of To, Cc, Bcc, exactly, in any case', async () => {
      expect(await ids({ recipient: 'CAROL@example.NET' })).toEqual([welcome.data.messageId]);
      expect(await ids({ recipient: 'erin@example.net' })).toEqual([bounced.data.messageId]);
      expect(await ids({ recipient: 'example.net' })).toEqual([]);
    });
    it('fromEmail: the whole address', async () => {
      expect(await ids({ fromEmail: 'billing@shop.test' })).toEqual(
        [queued, bounced, receipt].map((m) => m.data.messageId),
      );
      expect(await ids({ fromEmail: 'shop.test' })).toEqual([]);
    });
    it('tag: exactly', async () => {
      expect(await ids({ tag: 'receipts' })).toEqual([bounced.data.messageId, receipt.data.messageId]);
      expect(await ids({ tag: 'Receipts' })).toEqual([]);
    });
    it('status: a listing status in any case, or Postmark’s queued / sent', async () => {
      expect(await ids({ status: 'delivered' })).toEqual([welcome, receipt].map((m) => m.data.messageId));
      expect(await ids({ status: 'Bounced' })).toEqual([bounced.data.messageId]);
      expect(await ids({ status: 'queued' })).toEqual([queued.data.messageId]);
      expect(await ids({ status: 'sent' })).toEqual([bounced, welcome, receipt].map((m) => m.data.messageId));
      expect(await ids({ status: 'nonsense' })).toEqual([]);
    });
    it('subject: a substring, in any case', async () => {
      expect(await ids({ subject: 'receipt' })).toEqual([bounced.data.messageId, receipt.data.messageId]);
      expect(await ids({ subject: 'ÜNÏCODE' })).toEqual([bounced.data.messageId]);
      expect(await ids({ subject: "'; DROP TABLE messages; --" })).toEqual([]);
    });
    it('fromDate and toDate: inclusive bounds on receivedAt', async () => {
      expect(await ids({ fromDate: base + HOUR, toDate: base + 2 * HOUR })).toEqual(
        [bounced, welcome].map((m) => m.data.messageId),
      );
      expect(await ids({ fromDate: base + HOUR + 1 })).toEqual([queued, bounced].map((m) => m.data.messageId));
      expect(await ids({ toDate: base })).toEqual([receipt.data.messageId]);
    });
    it('filters combine; count and offset page through newest first while the total counts all', async () => {
      expect(await ids({ tag: 'receipts', status: 'delivered', recipient: 'ann@example.net' })).toEqual([
        receipt.data.messageId,
      ]);
      const page = await reader.list(org, { count: 2, offset: 1 });
      expect(page.total).toBe(4);
      expect(page.messages.map((m) => m.messageId)).toEqual([bounced, welcome].map((m) => m.data.messageId));
    });
  });

  it('pages through messages whose versions are not merged yet: each once, its latest status, the total exact', async () => {
    const org = randomUUID();
    const start = Date.now() - 3 * 24 * HOUR;
    // 25 messages over three days (three partitions), each written as three versions in three inserts.
    const messages = Array.from({ length: 25 }, (_, i) =>
      accepted(org, { at: start + i * 3 * HOUR, to: ['ann@example.net'], tag: i % 2 ? 'odd' : 'even' }),
    );
    await write(messages);
    await write(messages.map((m) => sent(m)));
    await write(messages.filter((_, i) => i % 3 === 0).map((m) => delivered(m, 'ann@example.net')));
    // ClickHouse merges the versions in the background, some time later: until then the search sees them all.

    const newestFirst = [...messages].reverse().map((m) => m.data.messageId);
    const paged: string[] = [];
    for (let offset = 0; offset < 25; offset += 4) {
      const page = await reader.list(org, { count: 4, offset });
      expect(page.total).toBe(25);
      paged.push(...page.messages.map((m) => m.messageId));
    }
    expect(paged).toEqual(newestFirst);
    const all = await listAll(org);
    expect(all.messages.map((m) => [m.messageId, m.status])).toEqual(
      [...messages].reverse().map((m, i) => [m.data.messageId, (24 - i) % 3 === 0 ? 'Delivered' : 'Sent']),
    );
    // The same answer as the status search, which keeps each message's latest status by grouping its versions.
    const viaFinal = await listAll(org, { status: 'delivered' });
    expect(viaFinal.messages.map((m) => m.messageId)).toEqual(
      all.messages.filter((m) => m.status === 'Delivered').map((m) => m.messageId),
    );
    expect(viaFinal.total).toBe(9);
    const odd = await listAll(org, { tag: 'odd' });
    expect(odd.total).toBe(12);
    expect(odd.messages.map((m) => m.messageId)).toEqual(newestFirst.filter((_, i) => (24 - i) % 2 === 1));
  });

  it('a status search right after a change lists the message under its new status only, merged or not, paged', async () => {
    const org = randomUUID();
    const start = Date.now() - 3 * 24 * HOUR;
    // 30 messages over three days (three partitions), newest first in every answer.
    const messages = Array.from({ length: 30 }, (_, i) =>
      accepted(org, { at: start + i * 2 * HOUR + 1000, to: ['ann@example.net'], tag: i % 2 ? 'odd' : 'even' }),
    );
    const ids = (list: MessageAccepted[]) => [...list].reverse().map((m) => m.data.messageId);
    const where = (keep: (i: number) => boolean) => messages.filter((_, i) => keep(i));
    const merge = () => client.command({ query: `OPTIMIZE TABLE ${database}.messages FINAL` });
    const search = async (status: string, filters: Record<string, unknown> = {}) => {
      const answer = await listAll(org, { status, ...filters });
      return { total: answer.total, ids: answer.messages.map((m) => m.messageId), statuses: answer.messages };
    };
    /** Every page of `count` of a status search, with the total each page gave. */
    const pages = async (status: string, count: number) => {
      const seen: string[] = [];
      const totals = new Set<number>();
      for (let offset = 0; offset < 40; offset += count) {
        const page = await reader.list(org, { status, count, offset });
        totals.add(page.total);
        seen.push(...page.messages.map((m) => m.messageId));
      }
      return { seen, totals: [...totals] };
    };

    await write(messages);
    expect((await search('queued')).ids).toEqual(ids(messages));
    expect((await search('sent')).total).toBe(0);

    await write(messages.map((m) => sent(m)));
    // Accepted → Sent: no longer queued, right away (two versions of each row, not merged).
    expect(await search('queued')).toMatchObject({ total: 0, ids: [] });
    expect(await search('sent')).toMatchObject({ total: 30, ids: ids(messages) });

    // Every day merged into one part: those days' rows are counted as they are.
    await merge();
    expect(await search('sent')).toMatchObject({ total: 30, ids: ids(messages) });

    // Sent → Delivered (every third) and Sent → Bounced (every fifth not delivered): new versions in merged days.
    const deliveredOnes = where((i) => i % 3 === 0);
    const bouncedOnes = where((i) => i % 3 !== 0 && i % 5 === 0);
    await write([
      ...deliveredOnes.map((m) => delivered(m, 'ann@example.net')),
      ...bouncedOnes.map((m) => hardBounced(m, 'ann@example.net')),
    ]);
    const check = async () => {
      const deliveredSearch = await search('delivered');
      expect(deliveredSearch).toMatchObject({ total: 10, ids: ids(deliveredOnes) });
      expect(deliveredSearch.statuses.every((m) => m.status === 'Delivered')).toBe(true);
      const bouncedSearch = await search('Bounced');
      expect(bouncedSearch).toMatchObject({ total: 4, ids: ids(bouncedOnes) });
      expect(bouncedSearch.statuses.every((m) => m.status === 'Bounced')).toBe(true);
      // Postmark's `sent`: every message past Queued, each once.
      expect(await search('sent')).toMatchObject({ total: 30, ids: ids(messages) });
      // With another filter: the odd tag's delivered ones.
      expect(await search('delivered', { tag: 'odd' })).toMatchObject({
        total: 5,
        ids: ids(deliveredOnes.filter((m) => m.data.tag === 'odd')),
      });
      // With a date range: the delivered ones of the last day and a half.
      const fromDate = start + 36 * HOUR;
      expect(await search('delivered', { fromDate })).toMatchObject({
        total: deliveredOnes.filter((m) => m.data.submittedAt >= fromDate).length,
        ids: ids(deliveredOnes.filter((m) => m.data.submittedAt >= fromDate)),
      });
      // Paged by three: each delivered message once, in order, the same total on every page.
      expect(await pages('delivered', 3)).toEqual({ seen: ids(deliveredOnes), totals: [10] });
      expect(await pages('bounced', 3)).toEqual({ seen: ids(bouncedOnes), totals: [4] });
    };
    await check();
    await merge();
    await check();

    // One more change after the merge: a message still Sent bounces. Its day now holds two parts again.
    const late = messages[29]!;
    await write([hardBounced(late, 'ann@example.net')]);
    expect(await search('bounced')).toMatchObject({ total: 5, ids: ids([...bouncedOnes, late]) });
    const stillSent = await search('sent');
    expect(stillSent.total).toBe(30);
    expect(stillSent.statuses.find((m) => m.messageId === late.data.messageId)?.status).toBe('Bounced');
    expect((await search('delivered')).ids).not.toContain(late.data.messageId);
  });

  it('a status search reads past rows whose status is out of date: the newest 140 deferred messages were delivered', async () => {
    const org = randomUUID();
    const start = Date.now() - 2 * 24 * HOUR;
    const messages = Array.from({ length: 150 }, (_, i) =>
      accepted(org, { at: start + i * 10 * 60_000, to: ['ann@example.net'] }),
    );
    await write(messages);
    await write(messages.map((m) => sent(m)));
    await write(messages.map((m) => deferred(m, 'ann@example.net')));
    // The ten oldest stay deferred; the newer ones' Deferred rows are still there, not merged with Delivered.
    await write(messages.slice(10).map((m) => delivered(m, 'ann@example.net')));

    const stillDeferred = messages
      .slice(0, 10)
      .reverse()
      .map((m) => m.data.messageId);
    const first = await reader.list(org, { status: 'deferred', count: 4, offset: 0 });
    expect(first.total).toBe(10);
    expect(first.messages.map((m) => [m.messageId, m.status])).toEqual(
      stillDeferred.slice(0, 4).map((id) => [id, 'Deferred']),
    );
    const last = await reader.list(org, { status: 'deferred', count: 4, offset: 8 });
    expect(last).toMatchObject({ total: 10 });
    expect(last.messages.map((m) => m.messageId)).toEqual(stillDeferred.slice(8));
    const delivered140 = await reader.list(org, { status: 'delivered', count: 3, offset: 137 });
    expect(delivered140.total).toBe(140);
    expect(delivered140.messages.map((m) => m.messageId)).toEqual(
      messages
        .slice(10, 13)
        .reverse()
        .map((m) => m.data.messageId),
    );
  });

  it('details: bodies, headers and the events in Postmark’s terms, oldest first', async () => {
    const org = randomUUID();
    const m = accepted(org, { to: ['ann@example.net', 'bob@example.net'], cc: ['cat@example.net'] });
    const events = [
      m,
      sent(m, m.data.submittedAt + 100),
      deferred(m, 'ann@example.net', 1, m.data.submittedAt + 200),
      delivered(m, 'ann@example.net', m.data.submittedAt + 300),
      hardBounced(m, 'bob@example.net', m.data.submittedAt + 400),
      policyRejected(m, 'cat@example.net', m.data.submittedAt + 500),
    ];
    await write(events);
    const details = await reader.details(org, m.data.messageId);
    expect(details).toMatchObject({
      textBody: 'Thanks for your order.',
      htmlBody: '<p>Thanks for your order.</p>',
      headers: [{ name: 'X-Order', value: '42' }],
      status: 'PartiallyDelivered',
    });
    const at = (offset: number) => m.data.submittedAt + offset;
    expect(details!.events).toEqual([
      ...['ann@example.net', 'bob@example.net', 'cat@example.net'].map((recipient) => ({
        type: 'Accepted',
        recipient,
        occurredAt: at(0),
        details: {},
      })),
      ...['ann@example.net', 'bob@example.net', 'cat@example.net'].map((recipient) => ({
        type: 'Sent',
        recipient,
        occurredAt: at(100),
        details: {},
      })),
      {
        type: 'Transient',
        recipient: 'ann@example.net',
        occurredAt: at(200),
        details: { DeliveryMessage: '451 4.2.0 Try again later', DestinationServer: '', DestinationIP: '' },
      },
      {
        type: 'Delivered',
        recipient: 'ann@example.net',
        occurredAt: at(300),
        details: {
          DeliveryMessage: '250 2.0.0 OK queued as 1234',
          DestinationServer: 'mx.example.net',
          DestinationIP: '',
        },
      },
      {
        type: 'Bounced',
        recipient: 'bob@example.net',
        occurredAt: at(400),
        details: {
          Summary: 'Bad destination mailbox address',
          BounceID: String(bounceIdOf(events[4]!.metadata.eventId)),
          BounceType: 'HardBounce',
          DeliveryMessage: '550 5.1.1 <x>: user unknown',
          SmtpCode: '550',
        },
      },
      {
        type: 'Rejected',
        recipient: 'cat@example.net',
        occurredAt: at(500),
        details: {
          Summary: 'Rejected by policy',
          DeliveryMessage: '550 5.7.1 Message rejected as spam',
          SmtpCode: '550',
        },
      },
    ]);
    for (const event of details!.events)
      for (const value of Object.values(event.details)) expect(typeof value).toBe('string');
  });

  it('never shows one organization’s messages to another', async () => {
    const mine = randomUUID();
    const theirs = randomUUID();
    const message = accepted(theirs, { to: ['shared@example.net'], subject: 'Secret', tag: 'shared' });
    await write([message, sent(message)]);
    expect(await reader.details(mine, message.data.messageId)).toBeNull();
    expect(await listAll(mine, { recipient: 'shared@example.net' })).toEqual({ total: 0, messages: [] });
    expect(await listAll(mine)).toEqual({ total: 0, messages: [] });
    expect((await reader.details(theirs, message.data.messageId))?.subject).toBe('Secret');
  });

  it('applying the same events twice changes nothing visible, in one batch, later, or from a writer that starts cold', async () => {
    const org = randomUUID();
    const a = accepted(org, { to: ['ann@example.net', 'bob@example.net'] });
    const b = accepted(org, { to: ['cat@example.net'] });
    const events = [
      a,
      sent(a),
      deferred(a, 'ann@example.net'),
      delivered(a, 'ann@example.net'),
      hardBounced(a, 'bob@example.net'),
      b,
      sent(b),
    ];
    await write(events);
    const snapshot = async () => ({
      list: await listAll(org),
      a: await reader.details(org, a.data.messageId),
      b: await reader.details(org, b.data.messageId),
      print: (await activityFingerprints(client, database)).get(org),
    });
    const first = await snapshot();
    expect(first.print?.counts).toEqual({ messages: 2, events: 7 });

    await write([...events, ...events]);
    expect(await snapshot()).toEqual(first);
    const cold = new ClickHouseActivityWriter(client, database, { maxDelayMs: 10 });
    await write(events.slice(1), cold);
    await write(events, cold);
    await cold.close();
    expect(await snapshot()).toEqual(first);
    // Physically there may be duplicate rows until ClickHouse merges them; FINAL hides them, and so does OPTIMIZE.
    await client.command({ query: `OPTIMIZE TABLE ${database}.message_events FINAL` });
    expect(await count(`SELECT count() AS n FROM ${database}.message_events WHERE organization_id = '${org}'`)).toBe(7);
  });

  it('a second MessageAccepted with a known MessageID (a keyed retry) is the same message: one row, one Accepted', async () => {
    const org = randomUUID();
    const m = accepted(org, { to: ['ann@example.net'] });
    // The retry's copy as it would come if the first attempt's time had been lost: other event id, later.
    const copy: MessageAccepted = {
      ...m,
      data: { ...m.data, submittedAt: m.data.submittedAt + 5000 },
      metadata: { ...m.metadata, eventId: randomUUID(), occurredAt: m.metadata.occurredAt + 5000 },
    };
    await write([m, copy]);
    await write([sent(m), copy, delivered(m, 'ann@example.net')]);
    const listed = await listAll(org);
    expect(listed.total).toBe(1);
    const details = await reader.details(org, m.data.messageId);
    expect(details?.status).toBe('Delivered');
    expect(details?.events.map((event) => [event.type, event.occurredAt])).toEqual([
      ['Accepted', m.metadata.occurredAt],
      ['Sent', expect.any(Number)],
      ['Delivered', expect.any(Number)],
    ]);
  });

  it('a MessageSent appended twice (the sender ran again after a fault) shows once: one Sent per attempt', async () => {
    const org = randomUUID();
    const m = accepted(org, { to: ['ann@example.net', 'bob@example.net'] });
    const first = sent(m);
    // Decided again by the sender's next run (Kafka took the first, the ledger's `sent` flag was not written):
    // the same event id, a later time. Its row has another sorting key, so FINAL alone keeps both.
    const again = { ...first, metadata: { ...first.metadata, occurredAt: first.metadata.occurredAt + 3000 } };
    await write([m, first]);
    await write([again, delivered(m, 'ann@example.net')]);
    const details = await reader.details(org, m.data.messageId);
    expect(details?.events.filter((event) => event.type === 'Sent')).toEqual([
      { type: 'Sent', recipient: 'ann@example.net', occurredAt: first.metadata.occurredAt, details: {} },
      { type: 'Sent', recipient: 'bob@example.net', occurredAt: first.metadata.occurredAt, details: {} },
    ]);
    expect(details?.events.map((event) => event.type)).toEqual(['Accepted', 'Accepted', 'Sent', 'Sent', 'Delivered']);
  });

  it('a writer that starts cold continues a message from the row in ClickHouse', async () => {
    const org = randomUUID();
    const m = accepted(org, { to: ['ann@example.net', 'bob@example.net'] });
    await write([m, sent(m), delivered(m, 'ann@example.net')]);
    const cold = new ClickHouseActivityWriter(client, database, { maxDelayMs: 10 });
    const flushes: ActivityFlushStats[] = [];
    const observed = new ClickHouseActivityWriter(client, database, {
      maxDelayMs: 10,
      onFlush: (s) => flushes.push(s),
    });
    await write([hardBounced(m, 'bob@example.net')], observed);
    await cold.close();
    await observed.close();
    expect(flushes[0]).toMatchObject({ loaded: 1, messageRows: 1, eventRows: 1, orphans: 0 });
    expect(await statusOf(org, m)).toBe('PartiallyDelivered');
  });

  it('reads a message back when its MessageAccepted comes again after the row left memory', async () => {
    const org = randomUUID();
    const small = new ClickHouseActivityWriter(client, database, { maxDelayMs: 10, cacheRows: 1 });
    const m = accepted(org);
    const other = accepted(org);
    await write([m, sent(m)], small);
    await write([other], small);
    // m is out of memory now; its MessageAccepted once more, then its delivery.
    await write([m], small);
    await write([delivered(m, 'ann@example.net')], small);
    await small.close();
    expect(await statusOf(org, m)).toBe('Delivered');
  });

  it('skips outcome events of a message it never saw accepted', async () => {
    const org = randomUUID();
    const stats: ActivityFlushStats[] = [];
    const own = new ClickHouseActivityWriter(client, database, { maxDelayMs: 10, onFlush: (s) => stats.push(s) });
    const ghost = accepted(org);
    await write([sent(ghost), delivered(ghost, 'ann@example.net')], own);
    await own.close();
    expect(stats[0]).toMatchObject({ orphans: 2, eventRows: 0, messageRows: 0 });
    expect(await reader.details(org, ghost.data.messageId)).toBeNull();
  });

  it('writes in batches: by count, and by time for a trickle — never a row per insert', async () => {
    const org = randomUUID();
    const stats: ActivityFlushStats[] = [];
    const batched = new ClickHouseActivityWriter(client, database, {
      maxEvents: 200,
      maxDelayMs: 300,
      onFlush: (s) => stats.push(s),
    });
    const messages = Array.from({ length: 250 }, () => accepted(org));
    const started = Date.now();
    await Promise.all(messages.map((m) => batched.write([{ event: m }])));
    expect(stats.map((s) => s.events)).toEqual([200, 50]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);

    stats.length = 0;
    const trickle = Array.from({ length: 5 }, () => accepted(org));
    const waits = [];
    for (const m of trickle) {
      waits.push(batched.write([{ event: m }]));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await Promise.all(waits);
    expect(stats.map((s) => s.events)).toEqual([5]);
    await batched.close();
    expect((await listAll(org)).total).toBe(255);
  });

  /**
   * A client whose count query (the one with ` AS total `) waits until the page query (starting with `pagePrefix`)
   * has been read and `landing` has written: a reader's count and page then see two moments.
   */
  function countAfterPageAndWrite(pagePrefix: string, landing: () => Promise<unknown>): ClickHouseClient {
    let pageRead: () => void = () => undefined;
    const pageDone = new Promise<void>((resolve) => (pageRead = resolve));
    let landed: Promise<unknown> | undefined;
    return new Proxy(client, {
      get: (target, property, receiver) =>
        property !== 'query'
          ? Reflect.get(target, property, receiver)
          : async (params: Parameters<ClickHouseClient['query']>[0]) => {
              if (params.query.includes(' AS total ')) {
                landed ??= pageDone.then(landing);
                await landed;
              }
              const result = await target.query(params);
              if (params.query.startsWith(pagePrefix)) pageRead();
              return result;
            },
    });
  }

  it('a message that lands between the count and the page is in neither: the total and the page agree', async () => {
    // The count and the page are two queries: this reader's count waits until the page has been read and a message
    // has landed (the window a client polling for its first message hit: TotalCount 1, no message).
    const org = randomUUID();
    const racing = countAfterPageAndWrite('SELECT message_id, received_at_ms', () => write([accepted(org)]));
    const racingReader = new ClickHouseActivityReader(racing, database, { timeoutMs: 10_000 });
    expect(await racingReader.list(org, { count: 10, offset: 0 })).toEqual({ total: 0, messages: [] });
    // The next read has it in both.
    const next = await listAll(org);
    expect([next.total, next.messages.length]).toEqual([1, 1]);
  });

  it('a bounce that lands between the count and the page of a bounce search is in neither: the total and the page agree', async () => {
    const org = randomUUID();
    const message = accepted(org, { to: ['ann@example.net', 'bob@example.net'] });
    await write([message, sent(message), hardBounced(message, 'ann@example.net')]);
    const racing = countAfterPageAndWrite('SELECT * FROM (', () => write([hardBounced(message, 'bob@example.net')]));
    const bounces = new ClickHouseBounceReader(new ActivityQueries(racing, database, { timeoutMs: 10_000 }), () =>
      Promise.resolve(new Set<string>()),
    );
    const first = await bounces.search(org, { count: 10, offset: 0 });
    expect([first.total, first.bounces.map((b) => b.recipient)]).toEqual([1, ['ann@example.net']]);
    // The next search has the second bounce in both.
    const next = await bounces.search(org, { count: 10, offset: 0 });
    expect([next.total, next.bounces.length]).toEqual([2, 2]);
  });

  describe('mail that comes back after the SMTP conversation', () => {
    const bounces = () => new ClickHouseBounceReader(new ActivityQueries(client, database), async () => new Set());
    const ann = 'ann@example.net';
    const later = (m: MessageAccepted, offset: number) => m.data.submittedAt + offset;

    it('a DSN’s hard bounce after the delivery: Delivered then Bounced, the message Bounced, listed as a bounce', async () => {
      const org = randomUUID();
      const m = accepted(org, { to: [ann] });
      const done = [m, sent(m), delivered(m, ann)];
      const dsn = returned(done, ann, RETURNED.hardBounce, later(m, 3_600_000), 'report-1');
      expect(dsn.map((e) => e.type)).toEqual(['MessageHardBounced']);
      // Each in its own flush, as they arrive live: the Delivered row is written, then moved by the DSN.
      for (const event of [...done, ...dsn]) await write([event]);
      expect(await statusOf(org, m)).toBe('Bounced');
      expect(expectedStatus([...done, ...dsn])).toBe('Bounced');
      expect((await listAll(org, { status: 'bounced' })).messages.map((x) => x.messageId)).toEqual([m.data.messageId]);
      expect((await listAll(org, { status: 'delivered' })).total).toBe(0);
      const events = (await reader.details(org, m.data.messageId))!.events.filter((e) => e.recipient === ann);
      expect(events.map((e) => e.type)).toEqual(['Accepted', 'Sent', 'Delivered', 'Bounced']);
      expect(events[3]).toEqual({
        type: 'Bounced',
        recipient: ann,
        occurredAt: later(m, 3_600_000),
        details: {
          Summary: 'Bad destination mailbox address',
          BounceID: String(bounceIdOf(dsn[0]!.metadata.eventId)),
          BounceType: 'HardBounce',
          DeliveryMessage: 'smtp; 550 5.1.1 <x>: mailbox unavailable',
          SmtpCode: '550',
          ReportID: 'report-1',
        },
      });
      const found = await bounces().search(org, { count: 10, offset: 0 });
      expect(found.bounces).toEqual([
        expect.objectContaining({ kind: 'HardBounced', recipient: ann, smtpCode: 550, reportId: 'report-1' }),
      ]);
    });

    it('details read while a bounce’s batch is half written (its event in, its state not yet) wait for the state', async () => {
      const org = randomUUID();
      const m = accepted(org, { to: [ann] });
      const done = [m, sent(m), delivered(m, ann)];
      for (const event of done) await write([event]);
      // The writer inserts a batch's events, then the messages' state: here the state's insert is held 150 ms.
      let held: Promise<void> | undefined;
      const slow = new Proxy(client, {
        get: (target, name, receiver) =>
          name === 'insert'
            ? async (params: Parameters<ClickHouseClient['insert']>[0]) => {
                if (String(params.table).endsWith('.messages')) {
                  held = new Promise((resolve) => setTimeout(resolve, 150));
                  await held;
                }
                return target.insert(params);
              }
            : Reflect.get(target, name, receiver),
      });
      const halfWriting = new ClickHouseActivityWriter(slow, database, { maxDelayMs: 10 });
      const dsn = returned(done, ann, RETURNED.hardBounce, later(m, 3_600_000), 'report-h');
      const writing = halfWriting.write(dsn.map((event) => ({ event })));
      // Once the bounce's event is in: the details show it, and the status it led to.
      const eventIn = async () =>
        (await reader.details(org, m.data.messageId))?.events.some((e) => e.type === 'Bounced') ?? false;
      while (!held || !(await eventIn())) await new Promise((resolve) => setTimeout(resolve, 5));
      const details = await reader.details(org, m.data.messageId);
      expect(details!.events.map((e) => e.type)).toContain('Bounced');
      expect(details!.status).toBe('Bounced');
      await writing;
      await halfWriting.close();
    });

    it('a spam complaint, an automatic reply and a delay notice: events of their own, the status unmoved', async () => {
      const org = randomUUID();
      const m = accepted(org, { to: [ann] });
      const base = [m, sent(m)];
      const delay = returned(base, ann, RETURNED.delay, later(m, 500), 'report-d');
      const done = [...base, ...delay, delivered(m, ann, later(m, 1000))];
      const reply = returned(done, ann, RETURNED.autoReply, later(m, 2000), 'report-a');
      const complaint = returned(done, ann, RETURNED.complaint, later(m, 3000), 'report-c');
      for (const event of [...done, ...reply, ...complaint]) await write([event]);
      expect(await statusOf(org, m)).toBe('Delivered');
      const events = (await reader.details(org, m.data.messageId))!.events.filter((e) => e.recipient === ann);
      expect(events.map((e) => e.type)).toEqual([
        'Accepted',
        'Sent',
        'Transient',
        'Delivered',
        'AutoResponder',
        'SpamComplaint',
      ]);
      expect(events[2]!.details).toEqual({
        DeliveryMessage: 'smtp; 451 4.4.7 Delivery delayed',
        DestinationServer: '',
        DestinationIP: '',
        Summary: 'Delivery delayed',
        BounceID: String(bounceIdOf(delay[0]!.metadata.eventId)),
        BounceType: 'Transient',
        ReportID: 'report-d',
      });
      expect(events[4]!.details).toEqual({
        Summary: 'Out of office until Monday',
        BounceID: String(bounceIdOf(reply[0]!.metadata.eventId)),
        BounceType: 'AutoResponder',
        ReportID: 'report-a',
      });
      expect(events[5]!.details).toEqual({
        Summary: 'Reported as spam by the recipient',
        BounceID: String(bounceIdOf(complaint[0]!.metadata.eventId)),
        BounceType: 'SpamComplaint',
        FeedbackType: 'abuse',
        UserAgent: 'ExampleFBL/1.0',
        ReportID: 'report-c',
      });
      const found = await bounces().search(org, { count: 10, offset: 0 });
      expect(found.bounces.map((b) => b.kind)).toEqual(['SpamComplaint', 'AutoReplied', 'DelayReported']);
      expect((await bounces().search(org, { count: 10, offset: 0, kinds: ['SpamComplaint'] })).total).toBe(1);
      expect(await bounces().countsByKind(org)).toEqual({
        HardBounced: 0,
        SoftBounced: 0,
        PolicyRejected: 0,
        DelayReported: 1,
        AutoReplied: 1,
        SpamComplaint: 1,
      });
    });

    it('a second writer that starts cold continues from the row: the late bounce still moves the recipient', async () => {
      const org = randomUUID();
      const m = accepted(org, { to: [ann] });
      const done = [m, sent(m), delivered(m, ann)];
      await write(done);
      const cold = new ClickHouseActivityWriter(client, database, { maxDelayMs: 50 });
      await write(returned(done, ann, RETURNED.hardBounce, later(m, 60_000)), cold);
      await cold.close();
      expect(await statusOf(org, m)).toBe('Bounced');
    });
  });

  it('a write resolves only once its rows are readable', async () => {
    const org = randomUUID();
    const m = accepted(org);
    await write([m]);
    expect(await statusOf(org, m)).toBe('Queued');
  });
});
