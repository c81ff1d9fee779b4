import { describe, expect, it } from 'vitest';
import { dkimPublicKeyBase64, dnsRecordsFor, hasVerificationRecord } from '../../src/accounts';
import { DomainError } from '../../src/domainError';
import { PUBLIC_KEY_BASE64, PUBLIC_KEY_PEM, SELECTOR, TOKEN } from './fixtures';

const domainState = { verificationToken: TOKEN, dkimSelector: SELECTOR, dkimPublicKey: PUBLIC_KEY_PEM };

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof DomainError ? error.code : `not a DomainError: ${String(error)}`;
  }
  return undefined;
}

describe('DNS records to publish for a domain', () => {
  it('lists ownership, MX, SPF, DKIM and DMARC records', () => {
    expect(dnsRecordsFor('acme.example', domainState, 'mx.sendline.example')).toEqual([
      {
        type: 'TXT',
        name: '_sendline.acme.example',
        value: `sendline-verification=${TOKEN}`,
        purpose: 'ownership',
      },
      { type: 'MX', name: 'acme.example', value: 'mx.sendline.example', priority: 10, purpose: 'mx' },
      { type: 'TXT', name: 'acme.example', value: 'v=spf1 include:mx.sendline.example ~all', purpose: 'spf' },
      {
        type: 'TXT',
        name: `${SELECTOR}._domainkey.acme.example`,
        value: `v=DKIM1; k=rsa; p=${PUBLIC_KEY_BASE64}`,
        purpose: 'dkim',
      },
      { type: 'TXT', name: '_dmarc.acme.example', value: 'v=DMARC1; p=none;', purpose: 'dmarc' },
    ]);
  });

  it('gives the same DKIM record for a key stored as bare base64', () => {
    const fromPem = dnsRecordsFor('acme.example', domainState, 'mx.sendline.example');
    const fromBase64 = dnsRecordsFor(
      'acme.example',
      { ...domainState, dkimPublicKey: PUBLIC_KEY_BASE64 },
      'mx.sendline.example',
    );
    expect(fromBase64).toEqual(fromPem);
  });

  it('writes the domain and the mail host in lower case', () => {
    expect(dnsRecordsFor('Acme.Example', domainState, 'MX.Sendline.Example')).toEqual(
      dnsRecordsFor('acme.example', domainState, 'mx.sendline.example'),
    );
  });

  it('refuses a mail host that is not a host name', () => {
    expect(codeOf(() => dnsRecordsFor('acme.example', domainState, 'mx sendline'))).toBe('InvalidMailHost');
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
