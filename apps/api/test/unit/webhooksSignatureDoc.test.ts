import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The signature check docs/webhooks.md gives customers, run as written: it accepts a call signed as the Standard
 * Webhooks specification says (HMAC-SHA256 of `id.timestamp.body`, keyed with the bytes of the `whsec_` secret)
 * and refuses a changed body, another secret and an old timestamp.
 */
type Check = (secret: string, headers: Record<string, string>, rawBody: string, tolerance?: number) => boolean;
let isSignedBySendline: Check;

beforeAll(async () => {
  const doc = readFileSync(fileURLToPath(new URL('../../../../docs/webhooks.md', import.meta.url)), 'utf8');
  const snippet = /## Verifying a call's signature[\s\S]*?```js\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!snippet) throw new Error('docs/webhooks.md has no js snippet under "Verifying a call\'s signature"');
  const file = join(mkdtempSync(join(tmpdir(), 'signature-doc-')), 'verify.mjs');
  writeFileSync(file, snippet);
  ({ isSignedBySendline } = (await import(pathToFileURL(file).href)) as { isSignedBySendline: Check });
});

const secret = `whsec_${randomBytes(32).toString('base64')}`;
function signed(body: string, timestamp = Math.floor(Date.now() / 1000), id = 'call-1', key = secret) {
  const mac = createHmac('sha256', Buffer.from(key.slice('whsec_'.length), 'base64'))
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${mac}` };
}

describe('the documented signature check (docs/webhooks.md)', () => {
  const body = JSON.stringify({ RecordType: 'Delivery', MessageID: 'm-1' });

  it('accepts a call signed with the secret', () => {
    expect(isSignedBySendline(secret, signed(body), body)).toBe(true);
  });

  it('accepts one of several signatures (a secret being rotated)', () => {
    const headers = signed(body);
    headers['webhook-signature'] = `v1,${randomBytes(32).toString('base64')} ${headers['webhook-signature']}`;
    expect(isSignedBySendline(secret, headers, body)).toBe(true);
  });

  it('refuses a changed body, another secret, and a timestamp older than the tolerance', () => {
    expect(isSignedBySendline(secret, signed(body), `${body} `)).toBe(false);
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    expect(isSignedBySendline(secret, signed(body, undefined, 'call-1', other), body)).toBe(false);
    expect(isSignedBySendline(secret, signed(body, Math.floor(Date.now() / 1000) - 600), body)).toBe(false);
  });

  it('refuses a call without the headers', () => {
    expect(isSignedBySendline(secret, {}, body)).toBe(false);
  });
});
