import { addressDomain } from '@sendline/domain';
import { decryptSecret } from '../crypto/secretBox';
import { InfrastructureError } from '../errors';
import type { AccountsView } from '../views/accounts/view';
import { dkimSigningKey, type DkimSigningKey } from './compose';

/**
 * The DKIM signing keys of sending domains, read from the accounts view (the domain's selector and its
 * private key, sealed with SENDLINE_SECRET_KEY) and opened once; kept for `ttlMs` so that a key rotated
 * through the console is picked up within that time.
 *
 * Errors: DkimDomainUnknown (the organization has no such domain any more) and the secret box's
 * SecretKeyMismatch / BadCiphertext, all non-retriable: trying again gives the same answer.
 */
export class DkimKeys {
  private readonly cache = new Map<string, { key: Promise<DkimSigningKey>; expires: number }>();

  constructor(
    private readonly accounts: Pick<AccountsView, 'domain'>,
    private readonly secretKey: Buffer,
    private readonly ttlMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The key that signs mail from `fromAddress` of the organization. */
  keyFor(organizationId: string, fromAddress: string): Promise<DkimSigningKey> {
    const domain = addressDomain(fromAddress);
    const slot = `${organizationId}:${domain}`;
    const cached = this.cache.get(slot);
    if (cached && cached.expires > this.now()) return cached.key;
    const key = this.load(organizationId, domain);
    this.cache.set(slot, { key, expires: this.now() + this.ttlMs });
    key.catch(() => this.cache.delete(slot));
    return key;
  }

  private async load(organizationId: string, domain: string): Promise<DkimSigningKey> {
    let state;
    try {
      state = await this.accounts.domain(organizationId, domain);
    } catch (cause) {
      throw new InfrastructureError('AccountsViewUnavailable', `cannot read domain ${domain}: ${String(cause)}`, {
        retriable: true,
        cause,
      });
    }
    if (!state) {
      throw new InfrastructureError(
        'DkimDomainUnknown',
        `organization ${organizationId} has no domain ${domain}: no DKIM key to sign with`,
        { retriable: false },
      );
    }
    const pem = decryptSecret(state.dkimPrivateKeyEncrypted, this.secretKey);
    return dkimSigningKey(domain, state.dkimSelector, pem);
  }
}
