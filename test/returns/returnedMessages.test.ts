/**
 * ReturnedMessages against the real activity store: what the returns reader knows of the messages that mail came
 * back about, read first from the recent days, then from the older ones for the ids not found there.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageEvent } from '@sendline/domain';
import { ActivityQueries, ClickHouseActivityWriter, ReturnedMessages, type ClickHouseClient } from '@sendline/infra';
import { accepted, delivered, freshActivityDatabase, sent } from '../projector/support';

const DAY = 24 * 3600_000;
const NOW = Date.UTC(2026, 10, 28, 12);

describe('ReturnedMessages', () => {
  let client: ClickHouseClient;
  let database: string;
  let drop: () => Promise<void>;
  let messages: ReturnedMessages;
  const org = randomUUID();
  const deliveredAt = (daysAgo: number, to: string) => {
    const message = accepted(org, { at: NOW - daysAgo * DAY, to: [to, 'other@example.net'] });
    return { message, events: [message, sent(message), delivered(message, to)] as MessageEvent[] };
  };
  const today = deliveredAt(0, 'ann@example.net');
  const yesterday = deliveredAt(1, 'bob@example.net');
  const lastWeek = deliveredAt(7, 'cid@example.net');

  beforeAll(async () => {
    ({ client, database, drop } = await freshActivityDatabase());
    const writer = new ClickHouseActivityWriter(client, database, { maxDelayMs: 50 });
    await writer.write([...today.events, ...yesterday.events, ...lastWeek.events].map((event) => ({ event })));
    await writer.close();
    messages = new ReturnedMessages(new ActivityQueries(client, database, { timeoutMs: 10_000 }), { now: () => NOW });
  });
  afterAll(async () => {
    await drop();
  });

  it('finds messages of the recent days and older ones in one call, with their organization and recipients', async () => {
    const ids = [today, yesterday, lastWeek].map(({ message }) => message.data.messageId);
    const states = await messages.states(ids);
    expect([...states.keys()].sort()).toEqual([...ids].sort());
    const state = states.get(lastWeek.message.data.messageId)!;
    expect(state.organizationId).toBe(org);
    expect([...state.recipients.keys()]).toEqual(['cid@example.net', 'other@example.net']);
    expect(state.recipients.get('cid@example.net')?.status).toBe('Delivered');
  });

  it('finds an old message alone, though the recent days hold none of the ids asked for', async () => {
    const states = await messages.states([lastWeek.message.data.messageId]);
    expect(states.get(lastWeek.message.data.messageId)?.phase).toBe('Sent');
  });

  it('leaves out a message the store does not have', async () => {
    const states = await messages.states([randomUUID(), today.message.data.messageId]);
    expect([...states.keys()]).toEqual([today.message.data.messageId]);
  });

  /** ReturnedMessages whose queries are recorded. */
  const recorded = () => {
    const reads: string[] = [];
    const queries = new ActivityQueries(client, database, { timeoutMs: 10_000 });
    const query = queries.query.bind(queries);
    queries.query = (sql, signal, settings) => {
      reads.push(sql);
      return query(sql, signal, settings);
    };
    return { reads, messages: new ReturnedMessages(queries, { now: () => NOW }) };
  };

  it('reads only the recent days when every id is found there', async () => {
    const { reads, messages } = recorded();
    await messages.states([today.message.data.messageId, yesterday.message.data.messageId]);
    expect(reads).toHaveLength(1);
    expect(reads[0]).toContain("day >= '2026-11-27'");
  });

  it('reads the lookups asked for while one is read together, each answered with its own messages', async () => {
    const { reads, messages } = recorded();
    const [first, second, third] = await Promise.all([
      messages.states([today.message.data.messageId]),
      messages.states([yesterday.message.data.messageId]),
      messages.states([today.message.data.messageId, yesterday.message.data.messageId]),
    ]);
    expect(reads).toHaveLength(2);
    expect([...first.keys()]).toEqual([today.message.data.messageId]);
    expect([...second.keys()]).toEqual([yesterday.message.data.messageId]);
    expect([...third.keys()]).toEqual([today.message.data.messageId, yesterday.message.data.messageId]);
  });
});
