import { describe, expect, it } from 'vitest';
import {
  addressesNamedBy,
  deliveryAttemptOf,
  returnedMailVerdicts,
  type ReportedRecipient,
  type ReturnedMail,
} from '../../src/returns';

const report = (...recipients: ReportedRecipient[]): ReturnedMail => ({
  kind: 'DeliveryReport',
  prose: false,
  recipients,
  original: {},
});
const failed = (fields: Partial<ReportedRecipient>): ReportedRecipient => ({
  finalRecipient: 'bob@example.org',
  action: 'failed',
  ...fields,
});
const complaint = (feedbackType: string, fields: Partial<ReturnedMail & { kind: 'Complaint' }> = {}): ReturnedMail => ({
  kind: 'Complaint',
  feedbackType,
  originalRcptTo: ['bob@example.org'],
  original: {},
  ...fields,
});

describe('deliveryAttemptOf', () => {
  it('takes the basic code and the text from an SMTP Diagnostic-Code, the enhanced code from Status', () => {
    expect(
      deliveryAttemptOf(failed({ status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 <bob@example.org>: User unknown' })),
    ).toEqual({
      kind: 'response',
      code: 550,
      text: '550 5.1.1 <bob@example.org>: User unknown',
      enhancedStatus: '5.1.1',
    });
  });

  it("takes Gmail's multi-line reply (550-5.1.1 …)", () => {
    expect(
      deliveryAttemptOf(
        failed({
          status: '5.1.1',
          diagnosticCode: 'smtp; 550-5.1.1 The email account does not exist. 550 5.1.1 gsmtp',
        }),
      ),
    ).toMatchObject({ code: 550, enhancedStatus: '5.1.1' });
  });

  it("takes the Diagnostic-Code's enhanced code over a Status that says nothing specific (5.0.0)", () => {
    expect(
      deliveryAttemptOf(failed({ status: '5.0.0', diagnosticCode: 'smtp; 550 5.1.1 User unknown' })),
    ).toMatchObject({
      code: 550,
      enhancedStatus: '5.1.1',
    });
    expect(deliveryAttemptOf(failed({ status: '5.0.0', diagnosticCode: 'smtp; 550 user unknown' }))).toMatchObject({
      code: 550,
      enhancedStatus: '5.0.0',
    });
  });

  it('stands for the Status class without a basic code: 554 for 5.x.x, 451 for 4.x.x', () => {
    expect(deliveryAttemptOf(failed({ status: '5.2.2' }))).toEqual({
      kind: 'response',
      code: 554,
      text: '5.2.2',
      enhancedStatus: '5.2.2',
    });
    expect(
      deliveryAttemptOf(failed({ status: '4.4.7', diagnosticCode: 'X-Postfix; connect to mx: timed out' })),
    ).toEqual({
      kind: 'response',
      code: 451,
      text: 'connect to mx: timed out',
      enhancedStatus: '4.4.7',
    });
  });

  it('is of class 5 for a failure that says nothing, of class 4 for a delay', () => {
    expect(deliveryAttemptOf(failed({}))).toEqual({ kind: 'response', code: 554, text: '' });
    expect(deliveryAttemptOf(failed({ action: 'delayed' }))).toEqual({ kind: 'response', code: 451, text: '' });
  });

  it('keeps a delay of class 4 even when its Diagnostic-Code quotes a 5xx', () => {
    expect(
      deliveryAttemptOf(failed({ action: 'delayed', status: '4.0.0', diagnosticCode: 'smtp; 550 try later' })),
    ).toMatchObject({
      code: 451,
    });
  });

  it("reads a Diagnostic-Code without a type (a bounce's prose)", () => {
    expect(
      deliveryAttemptOf(failed({ diagnosticCode: '552 Message size exceeds fixed maximum message size' })),
    ).toMatchObject({
      code: 552,
      text: '552 Message size exceeds fixed maximum message size',
    });
  });
});

describe('returnedMailVerdicts', () => {
  describe('for a failed recipient, the SMTP classifier decides', () => {
    it.each([
      ['5.1.1 user unknown', { status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 User unknown' }, 'HardBounce', true],
      ['5.2.1 mailbox disabled', { status: '5.2.1', diagnosticCode: 'smtp; 550 5.2.1 disabled' }, 'HardBounce', true],
      [
        '5.1.10 null MX / not found (Office 365)',
        { status: '5.1.10', diagnosticCode: 'smtp;550 5.1.10 RESOLVER.ADR.RecipientNotFound' },
        'HardBounce',
        true,
      ],
      [
        'plain 550 user unknown (RFC 3464 A.2)',
        { status: '5.0.0', diagnosticCode: 'smtp; 550 user unknown' },
        'HardBounce',
        true,
      ],
      ['5.2.2 mailbox full', { status: '5.2.2', diagnosticCode: 'smtp; 552 5.2.2 Mailbox full' }, 'SoftBounce', false],
      [
        '5.7.26 unauthenticated (Gmail)',
        { status: '5.7.26', diagnosticCode: 'smtp; 550-5.7.26 This mail is unauthenticated' },
        'PolicyRejection',
        false,
      ],
      [
        '5.0.0 about a block list',
        { status: '5.0.0', diagnosticCode: 'smtp; 554 rejected: client host blocked using a blocklist' },
        'PolicyRejection',
        false,
      ],
      ['a Status alone, 5.1.1', { status: '5.1.1' }, 'HardBounce', true],
      [
        'a Status alone, 5.0.0 (says nothing: not evidence against the address)',
        { status: '5.0.0' },
        'SoftBounce',
        false,
      ],
      ['nothing but failed', {}, 'SoftBounce', false],
    ])('%s → %s', (_, fields, kind, suppress) => {
      const [verdict] = returnedMailVerdicts(report(failed(fields)));
      expect(verdict).toMatchObject({
        kind: 'Bounced',
        recipient: 'bob@example.org',
        classification: { kind },
        suppress,
      });
    });

    it('carries the reply and its summary as a refusal during the conversation would', () => {
      expect(
        returnedMailVerdicts(
          report(failed({ status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 <bob@example.org>: User unknown' })),
        ),
      ).toEqual([
        {
          kind: 'Bounced',
          recipient: 'bob@example.org',
          classification: {
            kind: 'HardBounce',
            smtpResponse: '550 5.1.1 <bob@example.org>: User unknown',
            statusCode: 550,
            enhancedStatus: '5.1.1',
            summary: 'Bad destination mailbox address',
          },
          retriesExhausted: false,
          suppress: true,
        },
      ]);
    });

    it('a 4xx the remote server gave up on (RFC 3464 A.1: failed, 4.0.0, 426) is a SoftBounce, retries exhausted', () => {
      expect(
        returnedMailVerdicts(report(failed({ status: '4.0.0', diagnosticCode: 'smtp; 426 connection timed out' }))),
      ).toEqual([
        {
          kind: 'Bounced',
          recipient: 'bob@example.org',
          classification: {
            kind: 'SoftBounce',
            smtpResponse: '426 connection timed out',
            statusCode: 426,
            enhancedStatus: '4.0.0',
            summary: 'SMTP reply 426',
          },
          retriesExhausted: true,
          suppress: false,
        },
      ]);
    });
  });

  it('a delayed recipient is a transient notice', () => {
    expect(
      returnedMailVerdicts(
        report(failed({ action: 'delayed', status: '4.4.7', diagnosticCode: 'smtp; 421 4.4.7 later' })),
      ),
    ).toEqual([
      {
        kind: 'Delayed',
        recipient: 'bob@example.org',
        classification: {
          kind: 'Transient',
          reason: 'response',
          smtpResponse: '421 4.4.7 later',
          statusCode: 421,
          enhancedStatus: '4.4.7',
          summary: 'Delivery time expired',
        },
        suppress: false,
      },
    ]);
  });

  it.each([
    ['delivered', 'Delivered'],
    ['relayed', 'Relayed'],
    ['expanded', 'Expanded'],
  ] as const)('a %s recipient changes nothing', (action, reason) => {
    expect(returnedMailVerdicts(report(failed({ action })))).toEqual([
      { kind: 'NoChange', recipient: 'bob@example.org', reason, suppress: false },
    ]);
  });

  it('gives one verdict per recipient, naming the address as we gave it (Original-Recipient) first', () => {
    const verdicts = returnedMailVerdicts(
      report(
        failed({
          originalRecipient: 'Bob@Example.org',
          finalRecipient: 'bob.smith@mailhost.example.org',
          status: '5.1.1',
        }),
        { action: 'delayed', status: '4.0.0' },
      ),
    );
    expect(verdicts.map((v) => [v.kind, v.recipient])).toEqual([
      ['Bounced', 'Bob@Example.org'],
      ['Delayed', undefined],
    ]);
  });

  describe('a complaint', () => {
    it.each(['abuse', 'fraud'])('of type %s is a spam complaint, which suppresses', (type) => {
      expect(returnedMailVerdicts(complaint(type))).toEqual([
        { kind: 'SpamComplaint', recipient: 'bob@example.org', feedbackType: type, suppress: true },
      ]);
    });

    it.each(['not-spam', 'virus', 'auth-failure', 'other'])('of type %s is other feedback, which does not', (type) => {
      expect(returnedMailVerdicts(complaint(type))).toEqual([
        { kind: 'OtherFeedback', recipient: 'bob@example.org', feedbackType: type, suppress: false },
      ]);
    });

    it('names each Original-Rcpt-To once, else the addresses of the original To, else no one', () => {
      expect(
        returnedMailVerdicts(complaint('abuse', { originalRcptTo: ['a@x.example', 'A@X.example', 'b@x.example'] })).map(
          (v) => v.recipient,
        ),
      ).toEqual(['a@x.example', 'b@x.example']);
      expect(
        returnedMailVerdicts(complaint('abuse', { originalRcptTo: [], original: { to: 'Ann <ann@example.net>' } })).map(
          (v) => v.recipient,
        ),
      ).toEqual(['ann@example.net']);
      expect(returnedMailVerdicts(complaint('abuse', { originalRcptTo: [], original: { to: 'redacted' } }))).toEqual([
        { kind: 'SpamComplaint', feedbackType: 'abuse', suppress: true },
      ]);
    });
  });

  it('an automatic reply never suppresses: it names who replied', () => {
    const mail: ReturnedMail = {
      kind: 'AutoReply',
      subject: 'Out of Office',
      from: 'Bob <bob@example.org>',
      original: {},
    };
    expect(returnedMailVerdicts(mail)).toEqual([
      { kind: 'NoChange', recipient: 'bob@example.org', reason: 'AutomaticReply', suppress: false },
    ]);
  });

  it('an unrecognized message has no verdict', () => {
    expect(returnedMailVerdicts({ kind: 'Unrecognized', reason: 'junk' })).toEqual([]);
  });
});

describe('addressesNamedBy', () => {
  it("lists a report's recipients and the original's To, lowercased, each once", () => {
    const mail: ReturnedMail = {
      kind: 'DeliveryReport',
      prose: false,
      recipients: [
        { finalRecipient: 'Bob.Smith@mailhost.example.org', originalRecipient: 'Bob@Example.org', action: 'failed' },
        { finalRecipient: 'carol@example.org', action: 'delayed' },
      ],
      original: { to: 'Bob <bob@example.org>, Carol <CAROL@example.org>' },
    };
    expect(addressesNamedBy(mail)).toEqual(['bob.smith@mailhost.example.org', 'bob@example.org', 'carol@example.org']);
  });

  it("lists a complaint's Original-Rcpt-To and the original's To", () => {
    expect(
      addressesNamedBy(
        complaint('abuse', { originalRcptTo: ['Bob@Example.org'], original: { to: 'ann@example.net' } }),
      ),
    ).toEqual(['bob@example.org', 'ann@example.net']);
  });

  it('lists who sent an automatic reply', () => {
    expect(addressesNamedBy({ kind: 'AutoReply', from: 'Bob <Bob@Example.org>', original: {} })).toEqual([
      'bob@example.org',
    ]);
  });

  it('lists nothing for an unrecognized message', () => {
    expect(addressesNamedBy({ kind: 'Unrecognized', reason: 'junk', from: 'x@y.example' })).toEqual([]);
  });
});
