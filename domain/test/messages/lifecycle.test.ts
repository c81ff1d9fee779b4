import { describe, expect, it } from 'vitest';
import {
  canMessageMove,
  canRecipientMove,
  deriveMessageStatus,
  isConcluded,
  isTerminal,
  messageDecider,
  messageListingStatus,
  RECIPIENT_TRANSITIONS,
  type MessageEvent,
  type MessageListingStatus,
  type RecipientStatus,
} from '../../src/messages';
import { messageAccepted, messageDeferred, messageDelivered, messageSent } from './fixtures';

function stateOf(events: MessageEvent[]) {
  return events.reduce(messageDecider.evolve, messageDecider.initialState());
}

describe('message lifecycle transitions', () => {
  it('moves a message only forward: Initial → Accepted → Sent', () => {
    expect(canMessageMove('Initial', 'Accepted')).toBe(true);
    expect(canMessageMove('Accepted', 'Sent')).toBe(true);
    expect(canMessageMove('Initial', 'Sent')).toBe(false);
    expect(canMessageMove('Sent', 'Accepted')).toBe(false);
    expect(canMessageMove('Sent', 'Sent')).toBe(false);
  });

  it('makes HardBounced, SoftBounced and PolicyRejected terminal, and only those', () => {
    const terminal = (Object.keys(RECIPIENT_TRANSITIONS) as RecipientStatus[]).filter(isTerminal);
    expect(terminal.sort()).toEqual(['HardBounced', 'PolicyRejected', 'SoftBounced']);
  });

  it('concludes a delivery at Delivered or a refusal; only a DSN moves a Delivered recipient on, to a refusal', () => {
    const concluded = (Object.keys(RECIPIENT_TRANSITIONS) as RecipientStatus[]).filter(isConcluded);
    expect(concluded.sort()).toEqual(['Delivered', 'HardBounced', 'PolicyRejected', 'SoftBounced']);
    expect(RECIPIENT_TRANSITIONS.Delivered).toEqual(['HardBounced', 'SoftBounced', 'PolicyRejected']);
  });

  it('lets a deferred recipient be deferred again but never go back to Queued', () => {
    expect(canRecipientMove('Deferred', 'Deferred')).toBe(true);
    expect(canRecipientMove('Deferred', 'Queued')).toBe(false);
    expect(canRecipientMove('Queued', 'Queued')).toBe(false);
  });
});

describe('evolve', () => {
  it('queues every active recipient when the message is accepted', () => {
    const state = stateOf([messageAccepted()]);
    expect(state.phase).toBe('Accepted');
    if (state.phase === 'Initial') return;
    expect([...state.recipients]).toEqual([
      ['alice@customer.example', { status: 'Queued', failedAttempts: 0 }],
      ['bob@customer.example', { status: 'Queued', failedAttempts: 0 }],
      ['audit@shop.example', { status: 'Queued', failedAttempts: 0 }],
    ]);
  });

  it('keeps the attempt count of the last deferral', () => {
    const state = stateOf([
      messageAccepted(),
      messageSent(),
      messageDeferred('bob@customer.example', 1),
      messageDeferred('bob@customer.example', 2),
    ]);
    if (state.phase === 'Initial') throw new Error('expected an accepted message');
    expect(state.recipients.get('bob@customer.example')).toEqual({ status: 'Deferred', failedAttempts: 2 });
  });

  it('ignores an outcome replayed after the recipient became terminal', () => {
    const state = stateOf([
      messageAccepted(),
      messageSent(),
      messageDelivered('bob@customer.example'),
      messageDeferred('bob@customer.example', 1),
    ]);
    if (state.phase === 'Initial') throw new Error('expected an accepted message');
    expect(state.recipients.get('bob@customer.example')?.status).toBe('Delivered');
  });

  it('ignores a duplicate MessageAccepted', () => {
    const once = stateOf([messageAccepted(), messageSent()]);
    const twice = stateOf([messageAccepted(), messageSent(), messageAccepted({ activeRecipients: ['x@y.example'] })]);
    expect(twice).toEqual(once);
  });
});

describe('listing status', () => {
  const cases: Array<['Accepted' | 'Sent', RecipientStatus[], MessageListingStatus]> = [
    ['Accepted', ['Queued', 'Queued'], 'Queued'],
    ['Sent', ['Queued', 'Delivered'], 'Sent'],
    ['Sent', ['Queued', 'Deferred'], 'Sent'],
    ['Sent', ['Deferred', 'Delivered'], 'Deferred'],
    ['Sent', ['Delivered', 'Delivered'], 'Delivered'],
    ['Sent', ['Delivered', 'HardBounced'], 'PartiallyDelivered'],
    ['Sent', ['Delivered', 'PolicyRejected'], 'PartiallyDelivered'],
    ['Sent', ['HardBounced', 'PolicyRejected'], 'Bounced'],
    ['Sent', ['SoftBounced'], 'Bounced'],
    ['Sent', ['PolicyRejected', 'PolicyRejected'], 'Rejected'],
  ];
  it.each(cases)('a %s message with recipients %j is listed as %s', (phase, statuses, expected) => {
    expect(deriveMessageStatus(phase, statuses)).toBe(expected);
  });

  it('is derived from the aggregate state', () => {
    expect(messageListingStatus(stateOf([]))).toBeUndefined();
    expect(messageListingStatus(stateOf([messageAccepted()]))).toBe('Queued');
    expect(
      messageListingStatus(
        stateOf([
          messageAccepted({ activeRecipients: ['bob@customer.example'] }),
          messageSent(),
          messageDelivered('bob@customer.example'),
        ]),
      ),
    ).toBe('Delivered');
  });
});
