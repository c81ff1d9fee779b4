import { generateKeyPairSync } from 'node:crypto';
import { dkimSign } from 'mailauth/lib/dkim/sign';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryZone, startDnsServer, type RunningDnsServer } from '../../src/dns';
import { authenticateInboundMail, delimiterLines, INBOUND_MAIL_LIMITS } from '../../src/mail/inboundMail';

/** The count as the byte-by-byte loop that delimiterLines replaced made it: `--` at the start or after a CR or an LF. */
function countedByteByByte(bytes: Uint8Array): number {
  let count = 0;
  for (let i = 0; i + 1 < bytes.length && count <= INBOUND_MAIL_LIMITS.maxDelimiterLines; i++) {
    if (bytes[i] === 0x2d && bytes[i + 1] === 0x2d && (i === 0 || bytes[i - 1] === 0x0a || bytes[i - 1] === 0x0d)) {
      count++;
    }
  }
  return count;
}

describe('the lines of an inbound mail that may delimit MIME parts', () => {
  it('are counted at the start, after CRLF, LF or a lone CR, never inside a line, up to one over the limit', () => {
    const cases = [
      '',
      '-',
      '--',
      '--b\r\n',
      'x--b\r\n--b\r\n',
      'a\n--b\n--b--\n',
      'a\r--b\r\r--\r\n--',
      '---\n----\r\n-- --\n',
      'text -- not a delimiter\r\n- -\r\n',
      '\n\n--\n\r--\r\n--',
      '--x\r\n'.repeat(INBOUND_MAIL_LIMITS.maxDelimiterLines + 50),
      `${'--x\n'.repeat(3000)}${'--y\r'.repeat(3000)}`,
    ];
    for (const text of cases) {
      const bytes = new Uint8Array(Buffer.from(`pad${text}`).subarray(3));
      expect(delimiterLines(bytes), JSON.stringify(text.slice(0, 40))).toBe(countedByteByByte(bytes));
    }
    expect(delimiterLines(Buffer.from('--x\r\n'.repeat(6000)))).toBe(INBOUND_MAIL_LIMITS.maxDelimiterLines + 1);
  });
});

describe('DKIM of an inbound mail', () => {
  let dns: RunningDnsServer;
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const zone = new MemoryZone([
    {
      type: 'TXT',
      name: 'sel._domainkey.sender.example',
      value: `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`,
    },
  ]);
  beforeAll(async () => {
    dns = await startDnsServer({ zone });
  });
  afterAll(async () => {
    await dns.close();
  });

  async function dkimOf(raw: string): Promise<string> {
    const result = await authenticateInboundMail(
      Buffer.from(raw),
      { remoteAddress: '127.0.0.1', heloName: 'mail.sender.example', envelopeFrom: 'a@sender.example' },
      { mta: 'mx.test', dns: { servers: [dns.address] } },
    );
    return result.dkim;
  }

  it('passes with CRLF line ends and with bare LFs (read as CRLF), and not once the body changed', async () => {
    // mailauth is patched to find the line ends of the body by indexOf: the bytes it hashes are the same.
    const message =
      'From: Alice <a@sender.example>\r\nTo: b@inbound.example\r\nSubject: signed\r\n' +
      'Date: Mon, 5 Jan 2026 10:00:00 +0000\r\nMessage-ID: <1@sender.example>\r\n\r\n' +
      `Hello,\r\n\r\n${'a line of the body\r\n'.repeat(200)}\r\n-- \r\nAlice\r\n`;
    const key = {
      signingDomain: 'sender.example',
      selector: 'sel',
      privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }),
      canonicalization: 'relaxed/relaxed',
    };
    const { signatures } = await dkimSign(message, { ...key, signatureData: [key] });
    expect(signatures).toMatch(/^DKIM-Signature: /);
    const signed = `${signatures}${message}`;
    expect(await dkimOf(signed)).toBe('pass');
    expect(await dkimOf(signed.replace(/\r\n/g, '\n'))).toBe('pass');
    // A body that no longer matches its hash (mailauth says neutral: the signature itself is not checked).
    expect(await dkimOf(signed.replace('a line of the body', 'a line of the bodY'))).toBe('neutral');
  });
});
