import {
  evolveMessage,
  initialMessageState,
  messageListingStatus,
  type MessageAccepted,
  type MessageEvent,
  type MessageState,
} from '@sendline/domain';
import { acceptedRow, advanceRow, eventRow, progressOf, stateOfRow, type MessageRow } from '@sendline/infra';
import { describe, expect, it } from 'vitest';
import { acceptedMessage } from './acceptedMessage';

/**
 * How message events become activity rows (infra/src/views/activity/rows.ts), without ClickHouse: what came back
 * after the SMTP conversation (a DSN's refusal, a spam complaint, an automatic reply, a delay notice) as event rows,
 * and the message row moved by the domain's own transitions.
 */

const ORG = 'org-1';
const AT = Date.UTC(2026, 10, 1, 9);
const ANN = 'ann@example.net';
let ids = 0;
const meta = (at: number) => ({ eventId: `e-${++ids}`, organizationId: ORG, occurredAt: at, schemaVersion: 1 });

const accepted: MessageAccepted = {
  type: 'MessageAccepted',
  data: acceptedMessage({ submittedAt: AT }),
  metadata: meta(AT),
};
const messageId = accepted.data.messageId;
const sent: MessageEvent = { type: 'MessageSent', data: { messageId }, metadata: meta(AT + 100) };
const delivered: MessageEvent = {
  type: 'MessageDelivered',
  data: { messageId, recipient: ANN, smtpResponse: '250 2.0.0 OK', destinationServer: 'mx.example.net' },
  metadata: meta(AT + 1000),
};
const dsnHardBounced: MessageEvent = {
  type: 'MessageHardBounced',
  data: {
    messageId,
    recipient: ANN,
    smtpResponse: 'smtp; 550 5.1.1 <ann@example.net>: mailbox disabled',
    statusCode: 550,
    enhancedStatus: '5.1.1',
    summary: 'Bad destination mailbox address',
    reportId: 'report-1',
  },
  metadata: meta(AT + 3_600_000),
};
const complained: MessageEvent = {
  type: 'MessageSpamComplaint',
  data: {
    messageId,
    recipient: ANN,
    feedbackType: 'abuse',
    userAgent: 'Yahoo!-Mail-Feedback/2.0',
    summary: 'Reported as spam',
    reportId: 'report-2',
  },
  metadata: meta(AT + 7_200_000),
};
const autoReplied: MessageEvent = {
  type: 'MessageAutoReplied',
  data: { messageId, recipient: ANN, summary: 'Out of office', reportId: 'report-3' },
  metadata: meta(AT + 2000),
};
const delayReported: MessageEvent = {
  type: 'MessageDelayReported',
  data: {
    messageId,
    recipient: ANN,
    summary: 'Delivery delayed',
    enhancedStatus: '4.4.7',
    smtpResponse: 'smtp; 451 4.4.7 Delivery time expired',
    reportId: 'report-4',
  },
  metadata: meta(AT + 3000),
};

/** The events folded as the writer folds them: the row, and the state it continues from. */
function project(events: MessageEvent[]): { row: MessageRow; state: MessageState; changed: boolean[] } {
  let state = evolveMessage(initialMessageState(), accepted);
  const row = acceptedRow(accepted, state);
  const changed = events.map((event) => {
    state = evolveMessage(stateOfRow(row), event);
    return advanceRow(row, state, event);
  });
  return { row, state, changed };
}

describe('a message row', () => {
  it('moves from Delivered to HardBounced when a DSN says so, and lists the message as the domain does', () => {
    const { row, changed } = project([sent, delivered, dsnHardBounced]);
    expect(changed).toEqual([true, true, true]);
    expect(row.recipient_statuses).toEqual(['HardBounced']);
    expect(row.status).toBe('Bounced');
    const domain = [accepted, sent, delivered, dsnHardBounced].reduce(evolveMessage, initialMessageState());
    expect(row.status).toBe(messageListingStatus(domain));
    expect(row.updated_at_ms).toBe(dsnHardBounced.metadata.occurredAt);
    // Completed when the delivery concluded; the report that came later does not move it.
    expect(row.completed_at_ms).toBe(delivered.metadata.occurredAt);
  });

  it('takes a higher version for the refusal after the delivery, so the latest row wins its merge', () => {
    const afterDelivery = project([sent, delivered]).row.version;
    const afterReport = project([sent, delivered, dsnHardBounced]).row.version;
    expect(afterReport).toBeGreaterThan(afterDelivery);
    // Ranks follow the domain's transitions: Queued < Deferred < Delivered < a refusal (which may follow it).
    const ranks = ['Queued', 'Deferred', 'Delivered', 'HardBounced'].map((status) => progressOf('Sent', [status]));
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    expect(new Set(ranks).size).toBe(4);
    expect(progressOf('Sent', ['SoftBounced'])).toBe(progressOf('Sent', ['PolicyRejected']));
  });

  it('is not written again for a complaint, an automatic reply or a delay notice: none moves the recipient', () => {
    const { row, changed } = project([sent, delivered, autoReplied, delayReported, complained]);
    expect(changed).toEqual([true, true, false, false, false]);
    expect(row.recipient_statuses).toEqual(['Delivered']);
    expect(row.status).toBe('Delivered');
  });

  it('a refusal reported twice (the same DSN read again) changes nothing the second time', () => {
    const { changed } = project([sent, delivered, dsnHardBounced, dsnHardBounced]);
    expect(changed).toEqual([true, true, true, false]);
  });
});

describe('an event row', () => {
  const message = acceptedRow(accepted, evolveMessage(initialMessageState(), accepted));

  it('keeps the report a DSN’s refusal came in, and its diagnostic’s codes', () => {
    expect(eventRow(dsnHardBounced, message)).toMatchObject({
      type: 'HardBounced',
      recipient: ANN,
      smtp_code: 550,
      enhanced_status: '5.1.1',
      smtp_response: 'smtp; 550 5.1.1 <ann@example.net>: mailbox disabled',
      summary: 'Bad destination mailbox address',
      report_id: 'report-1',
      user_agent: '',
    });
  });

  it('a spam complaint: its feedback type as the reason, the reporting software, the report', () => {
    expect(eventRow(complained, message)).toMatchObject({
      type: 'SpamComplaint',
      recipient: ANN,
      summary: 'Reported as spam',
      reason: 'abuse',
      user_agent: 'Yahoo!-Mail-Feedback/2.0',
      report_id: 'report-2',
      smtp_code: 0,
    });
  });

  it('an automatic reply and a delay notice, the latter with the status its DSN gave', () => {
    expect(eventRow(autoReplied, message)).toMatchObject({
      type: 'AutoReplied',
      summary: 'Out of office',
      report_id: 'report-3',
    });
    expect(eventRow(delayReported, message)).toMatchObject({
      type: 'DelayReported',
      smtp_code: 451,
      enhanced_status: '4.4.7',
      smtp_response: 'smtp; 451 4.4.7 Delivery time expired',
      report_id: 'report-4',
    });
  });

  it('an answer during the conversation has no report', () => {
    expect(eventRow(delivered, message)).toMatchObject({ type: 'Delivered', report_id: '', user_agent: '' });
  });
});
