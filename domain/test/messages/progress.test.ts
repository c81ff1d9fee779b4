import { describe, expect, it } from 'vitest';
import { messageDecider, resumeRecipients, type MessageEvent, type MessageState } from '../../src/messages';
import {
  deferred,
  delivered,
  messageAccepted,
  messageDeferred,
  messageDelivered,
  messageSent,
  recordOutcome,
} from './fixtures';

const ALICE = 'alice@customer.example';
const BOB = 'bob@customer.example';

function stateOf(events: MessageEvent[]): MessageState {
  return events.reduce(messageDecider.evolve, messageDecider.initialState());
}

function recipientsOf(state: MessageState) {
  if (state.phase === 'Initial') throw new Error('expected an accepted message');
  return Object.fromEntries(state.recipients);
}

describe('resuming where recipients stand (a writer without the stream)', () => {
  it('given a sent message, when a retry record says bob failed twice, then bob is Deferred after 2 attempts and the others are Queued', () => {
    const state = resumeRecipients(
      stateOf([messageAccepted(), messageSent()]),
      new Map([[BOB, { status: 'Deferred', failedAttempts: 2 }]]),
    );
    expect(recipientsOf(state)).toEqual({
      [ALICE]: { status: 'Queued', failedAttempts: 0 },
      [BOB]: { status: 'Deferred', failedAttempts: 2 },
      'audit@shop.example': { status: 'Queued', failedAttempts: 0 },
    });
  });

  it('given bob resumed as Deferred after 2 attempts, then the decider answers as on the stream of those deferrals', () => {
    const resumed = resumeRecipients(
      stateOf([messageAccepted(), messageSent()]),
      new Map([[BOB, { status: 'Deferred', failedAttempts: 2 }]]),
    );
    const replayed = stateOf([messageAccepted(), messageSent(), messageDeferred(BOB, 1), messageDeferred(BOB, 2)]);
    expect(recipientsOf(resumed)).toEqual(recipientsOf(replayed));
    // The second attempt's deferral is recorded already; the third is new.
    expect(messageDecider.decide(recordOutcome(BOB, deferred(2)), resumed)).toEqual([]);
    expect(messageDecider.decide(recordOutcome(BOB, deferred(3)), resumed)).toMatchObject([
      { type: 'MessageDeferred', data: { recipient: BOB, attempt: 3 } },
    ]);
  });

  it('given alice was delivered by an earlier run, when resumed as Delivered, then an outcome for her decides nothing', () => {
    const state = resumeRecipients(
      stateOf([messageAccepted(), messageSent()]),
      new Map([[ALICE, { status: 'Delivered', failedAttempts: 0 }]]),
    );
    expect(recipientsOf(state)[ALICE]).toEqual({ status: 'Delivered', failedAttempts: 0 });
    expect(messageDecider.decide(recordOutcome(ALICE, delivered), state)).toEqual([]);
  });

  it('given a concluded recipient, when resumed as Deferred, then she stays concluded', () => {
    const state = resumeRecipients(
      stateOf([messageAccepted(), messageSent(), messageDelivered(ALICE)]),
      new Map([[ALICE, { status: 'Deferred', failedAttempts: 1 }]]),
    );
    expect(recipientsOf(state)[ALICE]).toEqual({ status: 'Delivered', failedAttempts: 0 });
  });

  it('given bob deferred 3 times, when resumed as deferred once, then his failed attempts do not go down', () => {
    const state = resumeRecipients(
      stateOf([messageAccepted(), messageSent(), messageDeferred(BOB, 3)]),
      new Map([[BOB, { status: 'Deferred', failedAttempts: 1 }]]),
    );
    expect(recipientsOf(state)[BOB]).toEqual({ status: 'Deferred', failedAttempts: 3 });
  });

  it('when an address is not an active recipient, or the message is not Sent yet, then nothing moves', () => {
    const sent = stateOf([messageAccepted(), messageSent()]);
    const stranger = resumeRecipients(
      sent,
      new Map([['eve@elsewhere.example', { status: 'Delivered', failedAttempts: 0 }]]),
    );
    expect(recipientsOf(stranger)).toEqual(recipientsOf(sent));
    const accepted = stateOf([messageAccepted()]);
    expect(resumeRecipients(accepted, new Map([[BOB, { status: 'Deferred', failedAttempts: 1 }]]))).toBe(accepted);
  });
});
