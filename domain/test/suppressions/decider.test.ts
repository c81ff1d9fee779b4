import { describe, expect, it } from 'vitest';
import type { EventMetadata } from '../../src/event';
import {
  suppressionDecider,
  suppressionForHardBounce,
  suppressionKey,
  type AddSuppression,
  type DeleteSuppression,
  type SuppressionAdded,
  type SuppressionOrigin,
  type SuppressionReason,
} from '../../src/suppressions';
import { DeciderSpecification } from '../decider-spec';

const ORG = 'org-7f3a';
const FIRST_AT = Date.UTC(2025, 0, 6, 9, 0, 0);
const LATER = FIRST_AT + 86_400_000;
const spec = DeciderSpecification.for(suppressionDecider);

function metadata(eventId: string, occurredAt: number): EventMetadata {
  return { eventId, organizationId: ORG, occurredAt, schemaVersion: 1 };
}

function add(
  emailAddress: string,
  reason: SuppressionReason = 'HardBounce',
  origin: SuppressionOrigin = 'Recipient',
  now = LATER,
): AddSuppression {
  return {
    type: 'AddSuppression',
    data: { emailAddress, reason, origin },
    metadata: { organizationId: ORG, now, eventIds: ['ev-add'] },
  };
}

function remove(emailAddress: string): DeleteSuppression {
  return {
    type: 'DeleteSuppression',
    data: { emailAddress },
    metadata: { organizationId: ORG, now: LATER, eventIds: ['ev-delete'] },
  };
}

function added(
  emailAddress: string,
  reason: SuppressionReason = 'HardBounce',
  origin: SuppressionOrigin = 'Recipient',
): SuppressionAdded {
  return {
    type: 'SuppressionAdded',
    data: { emailAddress, reason, origin, createdAt: FIRST_AT },
    metadata: metadata('ev-first', FIRST_AT),
  };
}

describe('suppression decider', () => {
  describe('when not suppressed', () => {
    it('suppresses a hard-bounced address, lowercased, created now', () => {
      spec
        .given([])
        .when(add('Bob@Customer.Example'))
        .then([
          {
            type: 'SuppressionAdded',
            data: { emailAddress: 'bob@customer.example', reason: 'HardBounce', origin: 'Recipient', createdAt: LATER },
            metadata: metadata('ev-add', LATER),
          },
        ]);
    });

    it("accepts a spam complaint from the recipient (through their provider's feedback loop)", () => {
      spec
        .given([])
        .when(add('bob@customer.example', 'SpamComplaint', 'Recipient'))
        .then([
          {
            type: 'SuppressionAdded',
            data: {
              emailAddress: 'bob@customer.example',
              reason: 'SpamComplaint',
              origin: 'Recipient',
              createdAt: LATER,
            },
            metadata: expect.anything(),
          },
        ]);
    });

    it.each<SuppressionOrigin>(['Customer', 'Admin'])('accepts a manual suppression from %s', (origin) => {
      spec
        .given([])
        .when(add('bob@customer.example', 'ManualSuppression', origin))
        .then([
          {
            type: 'SuppressionAdded',
            data: { emailAddress: 'bob@customer.example', reason: 'ManualSuppression', origin, createdAt: LATER },
            metadata: metadata('ev-add', LATER),
          },
        ]);
    });

    it.each<[SuppressionReason, SuppressionOrigin]>([
      ['HardBounce', 'Customer'],
      ['HardBounce', 'Admin'],
      ['ManualSuppression', 'Recipient'],
      ['SpamComplaint', 'Customer'],
      ['SpamComplaint', 'Admin'],
    ])('refuses a %s suppression from %s', (reason, origin) => {
      spec
        .given([])
        .when(add('bob@customer.example', reason, origin))
        .thenThrows('InvalidSuppressionOrigin');
    });

    it('refuses an unknown reason', () => {
      const command = add('bob@customer.example');
      spec
        .given([])
        .when({ ...command, data: { ...command.data, reason: 'Unsubscribe' as SuppressionReason } })
        .thenThrows('InvalidSuppressionOrigin');
    });

    it('refuses an address that is not a valid address', () => {
      spec.given([]).when(add('not-an-address')).thenThrows('InvalidEmailAddress');
    });

    it('still records a deletion, so that every view converges on "not suppressed"', () => {
      spec
        .given([])
        .when(remove('Bob@Customer.Example'))
        .then([
          {
            type: 'SuppressionDeleted',
            data: { emailAddress: 'bob@customer.example' },
            metadata: metadata('ev-delete', LATER),
          },
        ]);
    });

    it('refuses to delete an invalid address', () => {
      spec.given([]).when(remove('bob@')).thenThrows('InvalidEmailAddress');
    });
  });

  describe('when suppressed', () => {
    const given = [added('bob@customer.example')];

    it('decides nothing when the same address is suppressed again, keeping the first entry', () => {
      spec.given(given).when(add('bob@customer.example')).thenNothingHappened();
    });

    it('decides nothing when a manual suppression follows a hard bounce', () => {
      spec
        .given(given)
        .when(add('BOB@customer.example', 'ManualSuppression', 'Customer'))
        .thenNothingHappened();
    });

    it('still refuses a mismatched reason and origin', () => {
      spec
        .given(given)
        .when(add('bob@customer.example', 'HardBounce', 'Admin'))
        .thenThrows('InvalidSuppressionOrigin');
    });

    it('deletes the suppression', () => {
      spec
        .given(given)
        .when(remove('bob@customer.example'))
        .then([
          {
            type: 'SuppressionDeleted',
            data: { emailAddress: 'bob@customer.example' },
            metadata: metadata('ev-delete', LATER),
          },
        ]);
    });
  });

  describe('when suppressed and deleted', () => {
    const given = [
      added('bob@customer.example'),
      {
        type: 'SuppressionDeleted' as const,
        data: { emailAddress: 'bob@customer.example' },
        metadata: metadata('ev-d', FIRST_AT + 1),
      },
    ];

    it('suppresses the address again with a new createdAt', () => {
      spec
        .given(given)
        .when(add('bob@customer.example', 'ManualSuppression', 'Admin'))
        .then([
          {
            type: 'SuppressionAdded',
            data: {
              emailAddress: 'bob@customer.example',
              reason: 'ManualSuppression',
              origin: 'Admin',
              createdAt: LATER,
            },
            metadata: metadata('ev-add', LATER),
          },
        ]);
    });
  });

  describe('evolve', () => {
    it('keeps the first entry when a duplicate SuppressionAdded is replayed', () => {
      const later: SuppressionAdded = {
        ...added('bob@customer.example', 'ManualSuppression', 'Customer'),
        data: {
          emailAddress: 'bob@customer.example',
          reason: 'ManualSuppression',
          origin: 'Customer',
          createdAt: LATER,
        },
      };
      const state = [added('bob@customer.example'), later].reduce(
        suppressionDecider.evolve,
        suppressionDecider.initialState(),
      );
      expect(state).toEqual({
        status: 'Suppressed',
        emailAddress: 'bob@customer.example',
        reason: 'HardBounce',
        origin: 'Recipient',
        createdAt: FIRST_AT,
      });
    });
  });
});

describe('suppression helpers', () => {
  it('keys a suppression by organization and lowercased address', () => {
    expect(suppressionKey(ORG, ' Bob@Customer.Example ')).toBe('org-7f3a:bob@customer.example');
  });

  it('turns a hard bounce into a HardBounce suppression from the Recipient', () => {
    expect(
      suppressionForHardBounce({
        type: 'MessageHardBounced',
        data: {
          messageId: 'm-1',
          recipient: 'bob@customer.example',
          smtpResponse: '550 5.1.1 user unknown',
          statusCode: 550,
          enhancedStatus: '5.1.1',
          summary: 'Bad destination mailbox address',
        },
        metadata: metadata('ev-hard', FIRST_AT),
      }),
    ).toEqual({ emailAddress: 'bob@customer.example', reason: 'HardBounce', origin: 'Recipient' });
  });
});
