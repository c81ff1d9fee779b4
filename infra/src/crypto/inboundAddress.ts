import { createHmac } from 'node:crypto';

/**
 * An organization's inbound hash (the local part of its inbound address, Postmark's InboundHash) and its inbound
 * hook's signing secret: both derived from the organization's id under the service's secret key, so deciding them
 * twice (two first reads of the settings at once) gives the same, and nobody without the key can guess an
 * organization's address from its id.
 */
export function inboundHashOf(organizationId: string, secretKey: Buffer): string {
  return createHmac('sha256', secretKey)
    .update('sendline inbound address\0')
    .update(organizationId)
    .digest('hex')
    .slice(0, 32);
}

/** The inbound hook's signing secret in the Standard Webhooks form (`whsec_` and 32 octets, base64). */
export function inboundHookSigningSecretOf(organizationId: string, secretKey: Buffer): string {
  const key = createHmac('sha256', secretKey).update('sendline inbound hook signing\0').update(organizationId).digest();
  return `whsec_${key.toString('base64')}`;
}
