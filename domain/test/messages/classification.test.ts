import { describe, expect, it } from 'vitest';
import { classifyDeliveryAttempt, parseEnhancedStatus, type DeliveryAttempt } from '../../src/messages';

const response = (code: number, text: string, enhancedStatus?: string): DeliveryAttempt =>
  enhancedStatus === undefined ? { kind: 'response', code, text } : { kind: 'response', code, text, enhancedStatus };

describe('classifyDeliveryAttempt', () => {
  const cases: Array<[string, DeliveryAttempt, string]> = [
    ['250 accepted', response(250, '2.0.0 OK queued as 12345'), 'Delivered'],
    ['251 forwarded', response(251, 'User not local; will forward'), 'Delivered'],
    [
      '550 5.1.1 user unknown',
      response(550, '550 5.1.1 <x@y.example>: Recipient address rejected: User unknown'),
      'HardBounce',
    ],
    [
      '550-5.1.1 multiline (Gmail)',
      response(550, '550-5.1.1 The email account that you tried to reach does not exist.'),
      'HardBounce',
    ],
    ['5.1.2 bad destination system', response(550, '5.1.2 Host unknown'), 'HardBounce'],
    ['5.1.10 null MX', response(556, '5.1.10 Recipient address has null MX'), 'HardBounce'],
    [
      '5.2.1 mailbox disabled',
      response(550, '5.2.1 The email account that you tried to reach is disabled'),
      'HardBounce',
    ],
    ['enhanced code given separately', response(550, 'Mailbox unavailable', '5.1.1'), 'HardBounce'],
    ['plain 550 without enhanced code', response(550, 'Requested action not taken: mailbox unavailable'), 'HardBounce'],
    ['plain 551 without enhanced code', response(551, 'User not local'), 'HardBounce'],
    ['plain 553 without enhanced code', response(553, 'Mailbox name not allowed'), 'HardBounce'],
    ['5.0.0 falls back to the basic code', response(550, '5.0.0 No such user'), 'HardBounce'],
    ['5.7.1 refused', response(554, '5.7.1 Message rejected under policy'), 'PolicyRejection'],
    [
      '5.7.26 unauthenticated (Gmail)',
      response(550, '5.7.26 This mail has been blocked because the sender is unauthenticated.'),
      'PolicyRejection',
    ],
    [
      '5.7.1 even when the text says unknown user',
      response(550, '5.7.1 Unknown user or relay denied'),
      'PolicyRejection',
    ],
    [
      '5.1.8 our sender address refused',
      response(553, '5.1.8 Sender address rejected: Domain not found'),
      'PolicyRejection',
    ],
    ['plain 550 about spam', response(550, 'Message rejected as spam'), 'PolicyRejection'],
    [
      'plain 554 about a block list',
      response(554, 'Service unavailable; client host blocked using a blocklist'),
      'PolicyRejection',
    ],
    ['5.0.0 about DMARC', response(550, '5.0.0 Rejected by DMARC policy'), 'PolicyRejection'],
    ['5.2.2 mailbox full', response(552, '5.2.2 Mailbox full'), 'SoftBounce'],
    ['5.2.3 message too large', response(552, '5.2.3 Message exceeds maximum size'), 'SoftBounce'],
    ['5.3.4 too big for system', response(554, '5.3.4 Message too big for system'), 'SoftBounce'],
    ['5.4.4 unable to route', response(554, '5.4.4 Unable to route'), 'SoftBounce'],
    ['5.5.1 protocol error', response(500, '5.5.1 Command unrecognized'), 'SoftBounce'],
    [
      'plain 552 without enhanced code',
      response(552, 'Requested mail action aborted: exceeded storage allocation'),
      'SoftBounce',
    ],
    ['plain 554 without enhanced code', response(554, 'Transaction failed'), 'SoftBounce'],
    ['421 service not available', response(421, '4.3.2 Service not available, closing channel'), 'Transient'],
    ['450 greylisted', response(450, '4.2.0 Greylisted, please try again later'), 'Transient'],
    ['452 insufficient storage', response(452, '4.2.2 Mailbox full'), 'Transient'],
    ['an unexpected 3xx', response(354, 'Start mail input'), 'Transient'],
    ['a timeout', { kind: 'timeout' }, 'Transient'],
    ['a refused connection', { kind: 'connection', text: 'connect ECONNREFUSED 203.0.113.5:25' }, 'Transient'],
  ];

  it.each(cases)('classifies %s', (_, attempt, expected) => {
    expect(classifyDeliveryAttempt(attempt).kind).toBe(expected);
  });

  it('reports the reply as one line led by its code, with the parsed enhanced status and a summary', () => {
    expect(classifyDeliveryAttempt(response(550, '5.1.1 <x@y.example>: user unknown'))).toEqual({
      kind: 'HardBounce',
      smtpResponse: '550 5.1.1 <x@y.example>: user unknown',
      statusCode: 550,
      enhancedStatus: '5.1.1',
      summary: 'Bad destination mailbox address',
    });
  });

  it('keeps the text as it is when it already starts with the code', () => {
    const result = classifyDeliveryAttempt(response(250, '250 2.0.0 OK\r\n'));
    expect(result).toEqual({
      kind: 'Delivered',
      smtpResponse: '250 2.0.0 OK',
      statusCode: 250,
      enhancedStatus: '2.0.0',
    });
  });

  it('ignores an enhanced status whose class disagrees with the reply code', () => {
    const result = classifyDeliveryAttempt(response(550, '4.2.2 Mailbox full'));
    expect(result).toMatchObject({ kind: 'HardBounce', statusCode: 550 });
    expect(result).not.toHaveProperty('enhancedStatus');
  });

  it('tells a timeout from a connection failure', () => {
    expect(classifyDeliveryAttempt({ kind: 'timeout' })).toMatchObject({ kind: 'Transient', reason: 'timeout' });
    expect(classifyDeliveryAttempt({ kind: 'connection', text: 'getaddrinfo ENOTFOUND mx.x.example' })).toEqual({
      kind: 'Transient',
      reason: 'connection',
      summary: 'Could not connect to the receiving server: getaddrinfo ENOTFOUND mx.x.example',
    });
  });

  it('marks a 4xx as a transient response with the server text', () => {
    expect(classifyDeliveryAttempt(response(451, '4.7.1 Please try again later'))).toEqual({
      kind: 'Transient',
      reason: 'response',
      smtpResponse: '451 4.7.1 Please try again later',
      statusCode: 451,
      enhancedStatus: '4.7.1',
      summary: 'Delivery not authorized, message refused',
    });
  });
});

describe('parseEnhancedStatus', () => {
  it.each([
    ['550 5.1.1 <x@y>: user unknown', '5.1.1'],
    ['550-5.7.26 unauthenticated', '5.7.26'],
    ['5.2.2 Mailbox full', '5.2.2'],
    ['4.07.001 padded', '4.7.1'],
    ['550 Mailbox unavailable', undefined],
    ['550 see RFC 5.1.1a', undefined],
    ['550 version 1.2.3 of the spec', undefined],
  ])('reads %j as %s', (text, expected) => {
    expect(parseEnhancedStatus(text)).toBe(expected);
  });
});
