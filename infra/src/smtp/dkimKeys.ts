import { addressDomain } from '@sendline/domain';
import { decryptSecret } from '../crypto/secretBox';
import { InfrastructureError } from '../errors';
import type { AccountsView } from '../views/accounts/view';
import { dkimSigningKey, type DkimSigningKey } from './compose';

/** What the sender needs of a sending domain: its DKIM signing key, and its return path once verified. */
export interface SendingDomain {
  key: DkimSigningKey;
  /** The host of the domain's return path when its records are verified; null otherwise (not verified, or none). */
  returnPathHost: string | null;
}

/**
 * The DKIM signing keys of sending domains, and their verified return paths, read from the accounts view (the
 * domain's selector, its private key sealed with SENDLINE_SECRET_KEY, its return path) and opened once; kept for
 * `ttlMs` so that a key rotated or a return path verified through the console is picked up within that time.
 *
 * Errors: DkimDomainUnknown (the organization has no such domain any more) and the secret box's
 * SecretKeyMismatch / BadCiphertext, all non-retriable: trying again gives the same answer.
 */
export class DkimKeys {
  private readonly cache = new Map<string, { domain: Promise<SendingDomain>; expires: number }>();

  constructor(
    private readonly accounts: Pick<AccountsView, 'domain'>,
    private readonly secretKey: Buffer,
    private readonly ttlMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The key that signs mail from `fromAddress` of the organization. */
  async keyFor(organizationId: string, fromAddress: string): Promise<DkimSigningKey> {
    return (await this.sendingDomain(organizationId, fromAddress)).key;
  }

  /** The key and the verified return path of the domain of `fromAddress` of the organization. */
  sendingDomain(organizationId: string, fromAddress: string): Promise<SendingDomain> {
    const domain = addressDomain(fromAddress);
    const slot = `${organizationId}:${domain}`;
    const cached = this.cache.get(slot);
    if (cached && cached.expires > this.now()) return cached.domain;
    const loaded = this.load(organizationId, domain);
    this.cache.set(slot, { domain: loaded, expires: this.now() + this.ttlMs });
    loaded.catch(() => this.cache.delete(slot));
    return loaded;
  }

  private async load(organizationId: string, domain: string): Promise<SendingDomain> {
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
    const returnPath = state.returnPath;
    return {
      key: dkimSigningKey(domain, state.dkimSelector, pem),
      returnPathHost: returnPath != null && returnPath.verifiedAt !== null ? returnPath.host : null,
    };
  }
}
