import { describe, it } from 'vitest';
import {
  webhookCallDecider,
  type WebhookCallCommand,
  type WebhookCallScheduled,
  type WebhookCallScheduledData,
} from '../../src/webhookCalls';
import { DeciderSpecification } from '../decider-spec';

const ORG = 'org-1';
const AT = Date.UTC(2026, 10, 28, 12, 0, 0);
const LATER = AT + 60_000;
const spec = DeciderSpecification.for(webhookCallDecider);

const first: WebhookCallScheduledData = {
  callId: 'call-1',
  webhookId: 7,
  recordType: 'Delivery',
  sourceEventId: 'event-1',
  body: '{"RecordType":"Delivery"}',
  attempt: 1,
  retry: 0,
  firstScheduledAt: AT,
  dueAt: AT,
  manual: false,
};

function command(type: WebhookCallCommand['type'], data: unknown, now = AT): WebhookCallCommand {
  return { type, data, metadata: { organizationId: ORG, now, eventIds: ['record-1'] } } as WebhookCallCommand;
}

function scheduled(data: WebhookCallScheduledData, occurredAt = AT): WebhookCallScheduled {
  return {
    type: 'WebhookCallScheduled',
    data,
    metadata: { eventId: 'record-1', organizationId: ORG, occurredAt, schemaVersion: 1 },
  };
}

describe('webhook calls', () => {
  describe('scheduling a call', () => {
    it('schedules its first attempt on the calls topic, due now', () => {
      const { callId, webhookId, recordType, sourceEventId, body } = first;
      spec
        .given([])
        .when(command('ScheduleWebhookCall', { callId, webhookId, recordType, sourceEventId, body }))
        .then([scheduled(first)]);
    });

    it('fails loudly when the caller gave no record id', () => {
      const { callId, webhookId, recordType, sourceEventId, body } = first;
      spec
        .given([])
        .when({
          type: 'ScheduleWebhookCall',
          data: { callId, webhookId, recordType, sourceEventId, body },
          metadata: { organizationId: ORG, now: AT, eventIds: [] },
        })
        .thenThrows('MissingEventId');
    });
  });

  describe('after a failed attempt', () => {
    it('schedules the next attempt on the topic of its retry, due when the caller said', () => {
      const third = { ...first, attempt: 2, retry: 1, dueAt: AT + 1000 };
      spec
        .given([])
        .when(command('ScheduleNextWebhookAttempt', { failed: third, dueAt: LATER }, AT + 2000))
        .then([scheduled({ ...first, attempt: 3, retry: 2, dueAt: LATER }, AT + 2000)]);
    });

    it('keeps the call, its body and its first time', () => {
      spec
        .given([])
        .when(command('ScheduleNextWebhookAttempt', { failed: first, dueAt: LATER }, AT + 5))
        .then([scheduled({ ...first, attempt: 2, retry: 1, dueAt: LATER }, AT + 5)]);
    });
  });

  describe('when its webhook is backed up', () => {
    it('sets the call aside on the first retry topic, its attempt unchanged', () => {
      const second = { ...first, attempt: 2, retry: 1 };
      spec
        .given([])
        .when(command('SetAsideWebhookCall', { call: second, dueAt: LATER }))
        .then([scheduled({ ...second, retry: 1, dueAt: LATER })]);
    });
  });

  describe('a manual redelivery', () => {
    it('schedules the first record again, due now, marked manual', () => {
      spec
        .given([])
        .when(command('RedeliverWebhookCall', { first }, LATER))
        .then([scheduled({ ...first, dueAt: LATER, manual: true }, LATER)]);
    });
  });
});
