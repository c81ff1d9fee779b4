import { generateKeyPair, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import type { AddDomain } from '@sendline/domain';
import { encryptSecret } from '@sendline/infra';

export const DKIM_MODULUS_BITS = 2048;

const generateRsaKeyPair = promisify(generateKeyPair);

/** A DKIM selector naming the day the key was made (`sl20250110`), so a re-added domain gets a fresh name. */
export function dkimSelectorFor(now: number): string {
  return `sl${new Date(now).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

/**
 * What the `AddDomain` command carries for a new sending domain: its ownership token, an RSA-2048 DKIM key
 * pair whose private key is sealed with `secretKey` (only the sealed key enters the event), and the label of its
 * return path.
 */
export async function newSendingDomain(
  domain: string,
  now: number,
  secretKey: Buffer,
  returnPathLabel: string,
): Promise<AddDomain['data']> {
  const { publicKey, privateKey } = await generateRsaKeyPair('rsa', {
    modulusLength: DKIM_MODULUS_BITS,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return {
    domain,
    verificationToken: randomBytes(24).toString('base64url'),
    dkimSelector: dkimSelectorFor(now),
    dkimPublicKey: publicKey,
    dkimPrivateKeyEncrypted: encryptSecret(privateKey, secretKey),
    returnPathLabel,
  };
}
