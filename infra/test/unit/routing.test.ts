import { describe, expect, it } from 'vitest';
import { defaultTopicNames, routeEvent, topicConfigs, MAX_RECEIVED_MESSAGE_BYTES } from '../../src';

const receivedId = '0b8f3c1e-6a0d-4c55-9f0e-2f4f6c1d9a01';
const messageId = '5d1f0c7a-1b2c-4d3e-8f90-a1b2c3d4e5f6';

function mailReceived(data: Record<string, unknown>) {
  return { type: 'MailReceived', data: { receivedId, ...data }, metadata: { organizationId: '' } };
}

describe('where mail our MX received is written', () => {
  it('goes to mail.received, keyed by the message its first recipient’s token names', () => {
    expect(routeEvent(mailReceived({ messageId }))).toEqual({ topic: 'mail.received', key: messageId });
  });

  it('is keyed by its own received id when no token verified', () => {
    expect(routeEvent(mailReceived({}))).toEqual({ topic: defaultTopicNames.received, key: receivedId });
    expect(routeEvent(mailReceived({ messageId: null }))).toEqual({ topic: 'mail.received', key: receivedId });
  });

  it('is kept 7 days, deleted (never compacted), and takes a record larger than the largest message', () => {
    const config = topicConfigs().find((topic) => topic.topic === 'mail.received');
    const entries = Object.fromEntries((config?.configEntries ?? []).map((entry) => [entry.name, entry.value]));
    expect(entries['cleanup.policy']).toBe('delete');
    expect(entries['retention.ms']).toBe(String(7 * 24 * 60 * 60 * 1000));
    expect(Number(entries['max.message.bytes'])).toBeGreaterThan(MAX_RECEIVED_MESSAGE_BYTES);
  });
});
