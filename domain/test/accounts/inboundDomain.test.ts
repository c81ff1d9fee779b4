import { describe, expect, it } from 'vitest';
import {
  inboundDomainProblems,
  inboundDomainRecords,
  mailboxHashOf,
  organizationDecider,
  type ChangeServerSettings,
  type ServerSettingsChanged,
  type VerifyInboundDomain,
} from '../../src/accounts';
import { DeciderSpecification } from '../decider-spec';
import { LATER, anOrganization, command, eventMetadata } from './fixtures';

/** An organization's own inbound domain: its record, its verification, what a change of domain does to it. */

const { given } = DeciderSpecification.for(organizationDecider);

const HASH = '0123456789abcdef0123456789abcdef';
const SECRET = 'v1.aXY.dGFn.aW5ib3VuZA';
const MAIL_HOST = 'mx.sendline.test';
const DOMAIN = 'reply.acme.example';

const settings = (data: Partial<ServerSettingsChanged['data']> = {}): ServerSettingsChanged => ({
  type: 'ServerSettingsChanged',
  data: {
    inboundHash: HASH,
    inboundHookUrl: '',
    inboundDomain: DOMAIN,
    inboundSpamThreshold: 0,
    rawEmailEnabled: false,
    inboundHookSigningSecretSealed: SECRET,
    ...data,
  },
  metadata: eventMetadata('event-1', LATER),
});
const verify = (mx: string[], domain = DOMAIN) =>
  command<VerifyInboundDomain>('VerifyInboundDomain', {
    domain,
    mxRecords: mx.map((exchange) => ({ exchange, priority: 10 })),
    mailHost: MAIL_HOST,
  });
const change = (data: Partial<ChangeServerSettings['data']>) =>
  command<ChangeServerSettings>('ChangeServerSettings', {
    inboundHash: HASH,
    signingSecretSealed: SECRET,
    allowHttp: false,
    ...data,
  });

describe('the record an own inbound domain publishes', () => {
  it('is one MX, priority 10, to the mail host', () => {
    expect(inboundDomainRecords('Reply.Acme.Example', MAIL_HOST)).toEqual([
      { type: 'MX', name: DOMAIN, value: MAIL_HOST, priority: 10, purpose: 'mx' },
    ]);
  });

  it('is found wanting when missing, elsewhere, or shared with another exchange', () => {
    expect(inboundDomainProblems(DOMAIN, [], MAIL_HOST)).toEqual([
      `no MX record found at ${DOMAIN}; publish MX ${DOMAIN} 10 ${MAIL_HOST}`,
    ]);
    expect(inboundDomainProblems(DOMAIN, [{ exchange: 'mx.other.example', priority: 10 }], MAIL_HOST)[0]).toMatch(
      /is mx\.other\.example, not mx\.sendline\.test/,
    );
    expect(
      inboundDomainProblems(
        DOMAIN,
        [
          { exchange: `${MAIL_HOST}.`, priority: 10 },
          { exchange: 'mx.other.example', priority: 20 },
        ],
        MAIL_HOST,
      )[0],
    ).toMatch(/also has MX records for mx\.other\.example/);
    expect(inboundDomainProblems(DOMAIN, [{ exchange: 'MX.Sendline.Test.', priority: 5 }], MAIL_HOST)).toEqual([]);
  });
});

describe('VerifyInboundDomain', () => {
  it('records the domain verified when its MX points to the mail host', () => {
    given([...anOrganization(), settings()])
      .when(verify([MAIL_HOST]))
      .then([settings({ inboundDomainVerifiedAt: LATER })]);
  });

  it('decides nothing for a domain already verified', () => {
    given([...anOrganization(), settings({ inboundDomainVerifiedAt: LATER })])
      .when(verify([MAIL_HOST]))
      .then([]);
  });

  it('refuses a domain whose MX is elsewhere, naming the record to publish', () => {
    given([...anOrganization(), settings()])
      .when(verify(['mx.other.example']))
      .thenThrows('InboundDomainVerificationFailed');
  });

  it('refuses without a domain, or when the domain changed since the lookup', () => {
    given([...anOrganization(), settings({ inboundDomain: '' })])
      .when(verify([MAIL_HOST]))
      .thenThrows('InboundDomainNotSet');
    given([...anOrganization(), settings()])
      .when(verify([MAIL_HOST], 'old.acme.example'))
      .thenThrows('InboundDomainChanged');
  });
});

describe('a change of the server settings', () => {
  it('keeps the verification of a domain kept', () => {
    given([...anOrganization(), settings({ inboundDomainVerifiedAt: LATER })])
      .when(change({ inboundDomain: DOMAIN.toUpperCase(), rawEmailEnabled: true }))
      .then([settings({ inboundDomainVerifiedAt: LATER, rawEmailEnabled: true })]);
  });

  it('starts a new domain unverified, and drops the verification with the domain', () => {
    given([...anOrganization(), settings({ inboundDomainVerifiedAt: LATER })])
      .when(change({ inboundDomain: 'in.acme.example' }))
      .then([settings({ inboundDomain: 'in.acme.example' })]);
    given([...anOrganization(), settings({ inboundDomainVerifiedAt: LATER })])
      .when(change({ inboundDomain: '' }))
      .then([settings({ inboundDomain: '' })]);
  });
});

describe('mailboxHashOf', () => {
  it('is what follows the first + of the local part, case kept', () => {
    expect(mailboxHashOf('orders+Ticket-7@reply.acme.example')).toBe('Ticket-7');
    expect(mailboxHashOf('a+b+c@reply.acme.example')).toBe('b+c');
    expect(mailboxHashOf('orders@reply.acme.example')).toBe('');
  });
});
