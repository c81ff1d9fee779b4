import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readReturnedMail } from '@sendline/infra';
import { describe, expect, it } from 'vitest';
import { readReportOf } from '../../src';

/** The hand-written fixtures of infra/test/fixtures/returned-mail, read as the returns reader reads them. */
const FIXTURES = join(import.meta.dirname, '..', '..', '..', '..', 'infra', 'test', 'fixtures', 'returned-mail');
const reportOf = async (name: string) => readReportOf(await readReturnedMail(readFileSync(join(FIXTURES, name))));

describe('what a returned mail records for one recipient', () => {
  it('a DSN’s failed recipient is a HardBounced with the Diagnostic-Code, for the address it names', async () => {
    const report = await reportOf('postfix-dsn.eml');
    expect(report.namedRecipients).toEqual(['bob@example.org']);
    expect(report.outcomeOf('Bob@Example.org', false)).toMatchObject({
      kind: 'HardBounced',
      statusCode: 550,
      enhancedStatus: '5.1.1',
      smtpResponse: expect.stringContaining('User unknown'),
    });
  });

  it('a recipient the token names is the report’s subject even when the report names a forwarded address', async () => {
    const report = await reportOf('postfix-dsn.eml');
    expect(report.outcomeOf('alias@shop.example', true)).toMatchObject({ kind: 'HardBounced' });
    expect(report.outcomeOf('alias@shop.example', false)).toBe('NotAbout');
  });

  it('of several recipients, each gets its own reading', async () => {
    const report = await reportOf('rfc3464-several-recipients.eml');
    expect(report.outcomeOf('arathi@gateway.example.com', false)).toMatchObject({ kind: 'HardBounced' });
    expect(report.outcomeOf('relayed@elsewhere.example.org', false)).toBeUndefined();
  });

  it('a delay notice is DelayReported, a policy refusal PolicyRejected', async () => {
    expect((await reportOf('postfix-delayed.eml')).outcomeOf('carol@example.net', false)).toMatchObject({
      kind: 'DelayReported',
      enhancedStatus: '4.4.1',
    });
    expect((await reportOf('gmail-policy.eml')).outcomeOf('dana@gmail.example', false)).toMatchObject({
      kind: 'PolicyRejected',
      enhancedStatus: '5.7.26',
    });
  });

  it('an abuse report is a SpamComplaint with its feedback type and reporter, and names our message', async () => {
    const report = await reportOf('yahoo-arf.eml');
    expect(report.sendlineMessageId).toBe('0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d');
    expect(report.outcomeOf('erin@yahoo.example', false)).toEqual({
      kind: 'SpamComplaint',
      feedbackType: 'abuse',
      userAgent: 'Yahoo!-Mail-Feedback/2.0',
      summary: 'Reported as spam',
    });
  });

  it('feedback that is not a complaint records nothing', async () => {
    expect((await reportOf('not-spam-arf.eml')).outcomeOf('gina@receiver.example.com', false)).toBeUndefined();
  });

  it('an automatic reply is AutoReplied, and only a complaint offers its original’s message id for matching', async () => {
    const report = await reportOf('rfc3834-auto-replied.eml');
    expect(report.outcomeOf('bob@example.org', true)).toEqual({ kind: 'AutoReplied', summary: 'Automatic reply' });
    expect(report.sendlineMessageId).toBeUndefined();
  });

  it('a human reply or junk is unreadable: about nobody', async () => {
    for (const name of ['human-reply.eml', 'junk.eml']) {
      const report = await reportOf(name);
      expect(report.unreadable).toEqual(expect.any(String));
      expect(report.outcomeOf('bob@example.org', true)).toBe('NotAbout');
    }
  });
});
