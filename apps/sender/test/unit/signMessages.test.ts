import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { MessageAccepted } from '@sendline/domain';
import { checkDkim, DkimKeys, dkimRecordsFromMap, dkimRecordValue, encryptSecret } from '@sendline/infra';
import { describe, expect, it } from 'vitest';
import { signMessages } from '../../src/compose';
import type { Plan } from '../../src/plan';

/**
 * Step 2 of a delivery attempt: every message of a run composed and signed (the signatures made side by side), each
 * keyed by its id; a message whose domain has no key fails alone, and the others are signed and pass a receiver's
 * DKIM check.
 */

const secretKey = randomBytes(32);
const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
const privatePem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const publicPem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();

/**
 * The accounts view as DkimKeys reads it: one organization with two domains, shop.example (its return path
 * verified) and news.example (its return path not verified yet).
 */
const keys = { dkimSelector: 'sl1', dkimPrivateKeyEncrypted: encryptSecret(privatePem, secretKey) };
const accounts = {
  domain: async (organizationId: string, domain: string) => {
    if (organizationId !== 'org-1') return null;
    if (domain === 'shop.example') {
      return { ...keys, returnPath: { host: 'bounces.shop.example', assignedAt: 1, verifiedAt: 2 } };
    }
    if (domain === 'news.example') {
      return { ...keys, returnPath: { host: 'bounces.news.example', assignedAt: 1, verifiedAt: null } };
    }
    return null;
  },
} as unknown as ConstructorParameters<typeof DkimKeys>[0];

function plan(messageId: string, from: string): Plan {
  const accepted = {
    type: 'MessageAccepted',
    data: {
      messageId,
      from: { email: from },
      to: [{ email: 'ann@example.net' }],
      cc: [],
      bcc: [],
      replyTo: [],
      subject: `Order ${messageId}`,
      textBody: `Thanks for order ${messageId}.`,
      headers: [],
      metadata: {},
      attachments: [],
      trackOpens: false,
      trackLinks: 'None',
      messageStream: 'outbound',
      sizeBytes: 64,
      activeRecipients: ['ann@example.net'],
      suppressedRecipients: [],
      submittedAt: Date.UTC(2026, 10, 27),
    },
    metadata: { eventId: `e-${messageId}`, organizationId: 'org-1', occurredAt: 0, schemaVersion: 1 },
  } as MessageAccepted;
  return { messageId, organizationId: 'org-1', job: { accepted } } as unknown as Plan;
}

describe('signing a run’s messages', () => {
  it('signs every message under its own id, and fails only the one whose domain has no key', async () => {
    const ids = Array.from({ length: 6 }, (_, i) => `m-${i}`);
    const plans = ids.map((id) => plan(id, id === 'm-3' ? 'orders@gone.example' : 'orders@shop.example'));

    const signed = await signMessages(plans, new DkimKeys(accounts, secretKey));

    expect([...signed.keys()]).toEqual(ids);
    expect(signed.get('m-3')).toMatchObject({ failure: { code: 'DkimDomainUnknown', retriable: false } });
    const records = dkimRecordsFromMap({ 'sl1._domainkey.shop.example': dkimRecordValue(publicPem) });
    for (const id of ids.filter((id) => id !== 'm-3')) {
      const result = signed.get(id)!;
      if (!('raw' in result)) throw new Error(`${id} was not signed: ${String(result.failure)}`);
      expect(result.raw.toString()).toContain(`Subject: Order ${id}`);
      expect(await checkDkim(result.raw, records)).toMatchObject({ result: 'pass', domain: 'shop.example' });
      expect(result.returnPathHost).toBe('bounces.shop.example');
    }
  });

  it('gives no return path host for a domain whose return path is not verified', async () => {
    const signed = await signMessages([plan('m-news', 'letters@news.example')], new DkimKeys(accounts, secretKey));
    expect(signed.get('m-news')).toMatchObject({ returnPathHost: null });
  });
});
