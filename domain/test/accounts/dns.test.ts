import { describe, expect, it } from 'vitest';
import {
  dkimPublicKeyBase64,
  dnsRecordsFor,
  dnsRecordsToRemove,
  hasVerificationRecord,
  returnPathHost,
} from '../../src/accounts';
import { DomainError } from '../../src/domainError';
import { PUBLIC_KEY_BASE64, PUBLIC_KEY_PEM, SELECTOR, TOKEN } from './fixtures';

const returnPath = { host: 'bounces.acme.example' };
const domainState = { verificationToken: TOKEN, dkimSelector: SELECTOR, dkimPublicKey: PUBLIC_KEY_PEM, returnPath };
const service = { mailHost: 'mx.sendline.example', spfDomain: 'spf.sendline.example' };

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof DomainError ? error.code : `not a DomainError: ${String(error)}`;
  }
  return undefined;
}

describe('DNS records to publish for a domain', () => {
  it('lists ownership, MX and SPF of the return path, DKIM and DMARC records', () => {
    expect(dnsRecordsFor('acme.example', domainState, service)).toEqual([
      {
        type: 'TXT',
        name: '_sendline.acme.example',
        value: `sendline-verification=${TOKEN}`,
        purpose: 'ownership',
      },
      { type: 'MX', name: 'bounces.acme.example', value: 'mx.sendline.example', priority: 10, purpose: 'mx' },
      {
        type: 'TXT',
        name: 'bounces.acme.example',
        value: 'v=spf1 include:spf.sendline.example -all',
        purpose: 'spf',
      },
      {
        type: 'TXT',
        name: `${SELECTOR}._domainkey.acme.example`,
        value: `v=DKIM1; k=rsa; p=${PUBLIC_KEY_BASE64}`,
        purpose: 'dkim',
      },
      { type: 'TXT', name: '_dmarc.acme.example', value: 'v=DMARC1; p=none;', purpose: 'dmarc' },
    ]);
  });

  it('never asks for an MX or SPF record on the domain itself', () => {
    const records = dnsRecordsFor('acme.example', domainState, service);
    expect(records.filter((record) => record.name === 'acme.example')).toEqual([]);
  });

  it('has no MX or SPF record for a domain added before return paths, until it is assigned one', () => {
    const records = dnsRecordsFor('acme.example', { ...domainState, returnPath: null }, service);
    expect(records.map((record) => record.purpose)).toEqual(['ownership', 'dkim', 'dmarc']);
  });

  it('gives the same DKIM record for a key stored as bare base64', () => {
    const fromPem = dnsRecordsFor('acme.example', domainState, service);
    const fromBase64 = dnsRecordsFor('acme.example', { ...domainState, dkimPublicKey: PUBLIC_KEY_BASE64 }, service);
    expect(fromBase64).toEqual(fromPem);
  });

  it('writes the domain, the mail host and the SPF domain in lower case', () => {
    expect(
      dnsRecordsFor('Acme.Example', domainState, {
        mailHost: 'MX.Sendline.Example',
        spfDomain: 'SPF.sendline.example',
      }),
    ).toEqual(dnsRecordsFor('acme.example', domainState, service));
  });

  it('refuses a mail host or an SPF domain that is not a host name', () => {
    expect(codeOf(() => dnsRecordsFor('acme.example', domainState, { ...service, mailHost: 'mx sendline' }))).toBe(
      'InvalidMailHost',
    );
    expect(codeOf(() => dnsRecordsFor('acme.example', domainState, { ...service, spfDomain: 'spf' }))).toBe(
      'InvalidMailHost',
    );
  });
});

describe('records to remove', () => {
  it('asks a domain added before return paths to remove the MX on the domain itself, and only that one', () => {
    const legacy = { addedAt: 1000, returnPath: { assignedAt: 5000 } };
    expect(dnsRecordsToRemove('acme.example', legacy, service)).toEqual([
      { type: 'MX', name: 'acme.example', value: 'mx.sendline.example', priority: 10, purpose: 'mx' },
    ]);
    expect(dnsRecordsToRemove('acme.example', { addedAt: 1000, returnPath: null }, service)).toHaveLength(1);
  });

  it('asks nothing of a domain added with its return path', () => {
    expect(dnsRecordsToRemove('acme.example', { addedAt: 1000, returnPath: { assignedAt: 1000 } }, service)).toEqual(
      [],
    );
  });
});

describe('return path host', () => {
  it('is <label>.<domain>, lowercased', () => {
    expect(returnPathHost('Acme.Example', 'Bounces')).toBe('bounces.acme.example');
  });

  it('refuses a label of two labels or with an underscore', () => {
    expect(codeOf(() => returnPathHost('acme.example', 'a.b'))).toBe('InvalidReturnPathLabel');
    expect(codeOf(() => returnPathHost('acme.example', '_b'))).toBe('InvalidReturnPathLabel');
  });

  it('refuses a host longer than a domain name may be', () => {
    const long = `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.example`;
    expect(codeOf(() => returnPathHost(long, 'bounces'))).toBe('InvalidDomainName');
  });
});

describe('DKIM public key for the p= tag', () => {
  it('is the base64 body of a PEM PUBLIC KEY block', () => {
    expect(dkimPublicKeyBase64(PUBLIC_KEY_PEM)).toBe(PUBLIC_KEY_BASE64);
  });

  it('refuses a PKCS#1 RSA PUBLIC KEY block', () => {
    const pkcs1 = PUBLIC_KEY_PEM.replaceAll('PUBLIC KEY', 'RSA PUBLIC KEY');
    expect(codeOf(() => dkimPublicKeyBase64(pkcs1))).toBe('InvalidDkimPublicKey');
  });

  it('refuses text that is not base64', () => {
    expect(codeOf(() => dkimPublicKeyBase64('v=DKIM1; p=abc'))).toBe('InvalidDkimPublicKey');
  });
});

describe('ownership record check', () => {
  it('matches a record equal to sendline-verification=<token>', () => {
    expect(hasVerificationRecord(['v=spf1 -all', `sendline-verification=${TOKEN}`], TOKEN)).toBe(true);
  });

  it('joins a record split into character-strings', () => {
    expect(hasVerificationRecord([['sendline-', `verification=${TOKEN}`]], TOKEN)).toBe(true);
  });

  it('does not match a record of another token', () => {
    expect(hasVerificationRecord(['sendline-verification=other'], TOKEN)).toBe(false);
  });

  it('does not match when nothing was found', () => {
    expect(hasVerificationRecord([], TOKEN)).toBe(false);
  });

  it('does not match a token in another case', () => {
    expect(hasVerificationRecord([`sendline-verification=${TOKEN.toLowerCase()}`], TOKEN)).toBe(false);
  });
});
