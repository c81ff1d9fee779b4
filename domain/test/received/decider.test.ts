import { describe, it } from 'vitest';
import {
  NO_ORGANIZATION,
  receivedMailDecider,
  type MailReceived,
  type MailReceivedData,
  type RecordMailReceived,
} from '../../src/received';
import { DeciderSpecification } from '../decider-spec';

const AT = Date.UTC(2026, 10, 28, 12, 0, 0);
const spec = DeciderSpecification.for(receivedMailDecider);

const data: MailReceivedData = {
  receivedId: '0b8f3c1e-6a0d-4c55-9f0e-2f4f6c1d9a01',
  envelopeFrom: '',
  envelopeTo: ['b.token@bounces.sendline.dev'],
  remoteAddress: '192.0.2.7',
  heloName: 'mx.example.org',
  receivedAt: AT,
  raw: new Uint8Array([0x46, 0x72, 0x6f, 0x6d, 0x3a, 0x20, 0xff]),
};

function record(fields: Partial<MailReceivedData> = {}, organizationId = NO_ORGANIZATION): RecordMailReceived {
  return {
    type: 'RecordMailReceived',
    data: { ...data, ...fields },
    metadata: { organizationId, now: AT, eventIds: ['ev-1'] },
  };
}

function received(fields: Partial<MailReceivedData> = {}): MailReceived {
  return {
    type: 'MailReceived',
    data: { ...data, ...fields },
    metadata: { eventId: 'ev-1', organizationId: NO_ORGANIZATION, occurredAt: AT, schemaVersion: 1 },
  };
}

describe('received mail', () => {
  describe('when nothing was recorded yet', () => {
    it('records the message as it arrived, under no organization', () => {
      spec.given([]).when(record()).then([received()]);
    });

    it('keeps the message id a verified token named', () => {
      const messageId = '5d1f0c7a-1b2c-4d3e-8f90-a1b2c3d4e5f6';
      spec
        .given([])
        .when(record({ messageId }))
        .then([received({ messageId })]);
    });

    it('records it under no organization whatever the caller said', () => {
      spec.given([]).when(record({}, 'org-1')).then([received()]);
    });
  });

  describe('when the message was recorded', () => {
    it('records nothing a second time', () => {
      spec.given([received()]).when(record()).thenNothingHappened();
    });
  });
});
