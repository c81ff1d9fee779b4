import { describe, expect, it } from 'vitest';
import { classifyDeliveryAttempt, deliveryOutcomeOf } from '../../src/messages';

const HOUR = 3_600_000;
const FIRST = Date.UTC(2025, 0, 6, 9, 0, 0);
const context = { attempt: 1, firstAttemptAt: FIRST, now: FIRST, random: 0, destinationServer: 'mx.customer.example' };

describe('deliveryOutcomeOf', () => {
  it('records a 250 as Delivered with the destination server', () => {
    const classification = classifyDeliveryAttempt({ kind: 'response', code: 250, text: '2.0.0 OK' });
    expect(deliveryOutcomeOf(classification, context)).toEqual({
      kind: 'Delivered',
      smtpResponse: '250 2.0.0 OK',
      destinationServer: 'mx.customer.example',
    });
  });

  it('records a bad mailbox as HardBounced', () => {
    const classification = classifyDeliveryAttempt({ kind: 'response', code: 550, text: '5.1.1 user unknown' });
    expect(deliveryOutcomeOf(classification, context)).toEqual({
      kind: 'HardBounced',
      smtpResponse: '550 5.1.1 user unknown',
      statusCode: 550,
      enhancedStatus: '5.1.1',
      summary: 'Bad destination mailbox address',
    });
  });

  it('records a policy refusal as PolicyRejected', () => {
    const classification = classifyDeliveryAttempt({ kind: 'response', code: 550, text: '5.7.1 refused' });
    expect(deliveryOutcomeOf(classification, context)).toMatchObject({
      kind: 'PolicyRejected',
      enhancedStatus: '5.7.1',
    });
  });

  it('records mailbox full as a SoftBounced permanent failure, without retrying', () => {
    const classification = classifyDeliveryAttempt({ kind: 'response', code: 552, text: '5.2.2 Mailbox full' });
    expect(deliveryOutcomeOf(classification, { ...context, attempt: 3 })).toEqual({
      kind: 'SoftBounced',
      reason: 'PermanentFailure',
      smtpResponse: '552 5.2.2 Mailbox full',
      summary: 'Mailbox full',
      attempts: 3,
    });
  });

  it('defers a 4xx to the next retry time', () => {
    const classification = classifyDeliveryAttempt({ kind: 'response', code: 451, text: '4.3.0 try later' });
    expect(deliveryOutcomeOf(classification, { ...context, attempt: 2, now: FIRST + 60_000 })).toEqual({
      kind: 'Deferred',
      reason: 'response',
      smtpResponse: '451 4.3.0 try later',
      summary: 'Other or undefined mail system status',
      attempt: 2,
      nextAttemptAt: FIRST + 60_000 + 120_000,
    });
  });

  it('defers a timeout without an SMTP response', () => {
    const outcome = deliveryOutcomeOf(classifyDeliveryAttempt({ kind: 'timeout' }), context);
    expect(outcome).toMatchObject({ kind: 'Deferred', reason: 'timeout', attempt: 1, nextAttemptAt: FIRST + 60_000 });
    expect(outcome).not.toHaveProperty('smtpResponse');
  });

  it('soft-bounces a transient failure once 72 hours have passed', () => {
    const classification = classifyDeliveryAttempt({ kind: 'connection', text: 'ECONNREFUSED' });
    expect(deliveryOutcomeOf(classification, { ...context, attempt: 25, now: FIRST + 72 * HOUR })).toEqual({
      kind: 'SoftBounced',
      reason: 'RetriesExhausted',
      summary: 'Could not connect to the receiving server: ECONNREFUSED',
      attempts: 25,
    });
  });
});
