import { describe, expect, it } from 'vitest';
import { accountEventKey, foldOrganization, initialOrganizationState } from '../../src/accounts';
import type { AccountEvent } from '../../src/accounts';
import {
  ADMIN,
  CREATED_AT,
  DOMAIN,
  DOMAIN_ADDED_AT,
  DOMAIN_VERIFIED_AT,
  RETURN_PATH_ASSIGNED_AT,
  RETURN_PATH_HOST,
  RETURN_PATH_VERIFIED_AT,
  KEY_ID,
  KEY_ISSUED_AT,
  KEY_REVOKED_AT,
  ORG,
  allowanceSet,
  anOrganization,
  apiKeyData,
  apiKeyIssued,
  apiKeyRevoked,
  domainAdded,
  domainAddedWithReturnPath,
  domainKeys,
  domainRemoved,
  domainVerified,
  memberAdded,
  memberRemoved,
  returnPathAssigned,
  returnPathVerified,
} from './fixtures';

/** What Kafka log compaction leaves: the last event per key, in log order. */
function compact(events: readonly AccountEvent[]): AccountEvent[] {
  const last = new Map<string, number>();
  events.forEach((event, index) => last.set(accountEventKey(event), index));
  return events.filter((event, index) => last.get(accountEventKey(event)) === index);
}

const fullHistory = (): AccountEvent[] => [
  ...anOrganization(),
  memberAdded('bob@acme.example', 'developer'),
  memberAdded('carol@acme.example', 'viewer'),
  memberRemoved('carol@acme.example'),
  domainAdded(),
  domainVerified(),
  returnPathAssigned(),
  returnPathVerified(),
  domainAdded('old.example'),
  domainAdded('gone.example'),
  {
    type: 'DomainRemoved',
    data: { domain: 'gone.example' },
    metadata: { ...domainRemoved().metadata, eventId: 'ev-gone' },
  },
  apiKeyIssued(),
  apiKeyRevoked(),
  {
    type: 'ApiKeyIssued',
    data: { ...apiKeyData, keyId: 'second-key', keyHash: 'c'.repeat(64), scopes: ['members:read'] },
    metadata: { ...apiKeyIssued().metadata, eventId: 'ev-second-key' },
  },
  allowanceSet(1_000),
  allowanceSet(2_000),
];

describe('organization state', () => {
  it('starts with no organization, nobody, nothing and no allowance limit', () => {
    expect(initialOrganizationState()).toEqual({
      organization: null,
      members: new Map(),
      domains: new Map(),
      apiKeys: new Map(),
      allowance: null,
      webhooks: new Map(),
      server: null,
      inboundRules: new Map(),
    });
  });

  it('holds the organization and its admin after creation', () => {
    const state = foldOrganization(anOrganization());
    expect(state.organization).toEqual({ id: ORG, name: 'Acme', createdAt: CREATED_AT });
    expect(state.members).toEqual(new Map([[ADMIN, { role: 'admin', addedAt: CREATED_AT }]]));
  });

  it('holds an added domain as unverified', () => {
    const state = foldOrganization([...anOrganization(), domainAdded()]);
    const { domain: _domain, ...keys } = domainKeys;
    expect(state.domains.get(DOMAIN)).toEqual({
      ...keys,
      verified: false,
      verifiedAt: null,
      addedAt: DOMAIN_ADDED_AT,
      returnPath: null,
    });
  });

  it('holds the return path a domain was added with', () => {
    const state = foldOrganization([...anOrganization(), domainAddedWithReturnPath()]);
    expect(state.domains.get(DOMAIN)?.returnPath).toEqual({
      host: RETURN_PATH_HOST,
      assignedAt: DOMAIN_ADDED_AT,
      verifiedAt: null,
    });
  });

  it('gives a domain added before return paths the one assigned later, its verification kept', () => {
    const state = foldOrganization([...anOrganization(), domainAdded(), domainVerified(), returnPathAssigned()]);
    expect(state.domains.get(DOMAIN)).toMatchObject({
      verified: true,
      verifiedAt: DOMAIN_VERIFIED_AT,
      addedAt: DOMAIN_ADDED_AT,
      returnPath: { host: RETURN_PATH_HOST, assignedAt: RETURN_PATH_ASSIGNED_AT, verifiedAt: null },
    });
  });

  it('rebuilds the whole domain from its last event alone (the others compacted away)', () => {
    const state = foldOrganization([...anOrganization(), returnPathVerified()]);
    const { domain: _domain, ...keys } = domainKeys;
    expect(state.domains.get(DOMAIN)).toEqual({
      ...keys,
      verified: true,
      verifiedAt: DOMAIN_VERIFIED_AT,
      addedAt: DOMAIN_ADDED_AT,
      returnPath: { host: RETURN_PATH_HOST, assignedAt: RETURN_PATH_ASSIGNED_AT, verifiedAt: RETURN_PATH_VERIFIED_AT },
    });
  });

  it('keys the return path events by their domain', () => {
    expect([returnPathAssigned(), returnPathVerified()].map(accountEventKey)).toEqual([
      `domain/${ORG}/${DOMAIN}`,
      `domain/${ORG}/${DOMAIN}`,
    ]);
  });

  it('marks a domain verified at the time of DomainVerified', () => {
    const state = foldOrganization([...anOrganization(), domainAdded(), domainVerified()]);
    expect(state.domains.get(DOMAIN)).toMatchObject({ verified: true, verifiedAt: DOMAIN_VERIFIED_AT });
  });

  it('keeps a revoked key, with the time it was revoked', () => {
    const state = foldOrganization([...anOrganization(), apiKeyIssued(), apiKeyRevoked()]);
    expect(state.apiKeys.get(KEY_ID)).toEqual({
      keyId: KEY_ID,
      name: apiKeyData.name,
      scopes: apiKeyData.scopes,
      mode: 'live',
      keyHash: apiKeyData.keyHash,
      prefix: apiKeyData.keyPrefix,
      issuedAt: KEY_ISSUED_AT,
      revokedAt: KEY_REVOKED_AT,
    });
  });

  it('drops removed members and domains', () => {
    const state = foldOrganization(fullHistory());
    expect([...state.members.keys()].sort()).toEqual([ADMIN, 'bob@acme.example']);
    expect([...state.domains.keys()].sort()).toEqual([DOMAIN, 'old.example']);
  });

  it('holds the last allowance set', () => {
    expect(foldOrganization(fullHistory()).allowance).toBe(2_000);
  });

  describe('on the compacted accounts topic', () => {
    it('keys each event by the entity it changes', () => {
      expect(fullHistory().map(accountEventKey).slice(0, 7)).toEqual([
        `organization/${ORG}`,
        `member/${ORG}/${ADMIN}`,
        `member/${ORG}/bob@acme.example`,
        `member/${ORG}/carol@acme.example`,
        `member/${ORG}/carol@acme.example`,
        `domain/${ORG}/${DOMAIN}`,
        `domain/${ORG}/${DOMAIN}`,
      ]);
      expect(accountEventKey(apiKeyRevoked())).toBe(`apikey/${ORG}/${KEY_ID}`);
      expect(accountEventKey(allowanceSet(1))).toBe(`allowance/${ORG}`);
    });

    it('compaction actually drops events of this history (the premise of the next tests)', () => {
      const compacted = compact(fullHistory());
      expect(compacted.length).toBeLessThan(fullHistory().length);
      expect(compacted.some((e) => e.type === 'DomainAdded' && e.data.domain === DOMAIN)).toBe(false);
      expect(compacted.some((e) => e.type === 'ApiKeyIssued' && e.data.keyId === KEY_ID)).toBe(false);
    });

    it('rebuilds the same state from what compaction keeps as from the full history', () => {
      expect(foldOrganization(compact(fullHistory()))).toEqual(foldOrganization(fullHistory()));
    });

    it('rebuilds the same state when the surviving events of different entities arrive in another order', () => {
      const reversed = compact(fullHistory()).reverse();
      expect(foldOrganization(reversed)).toEqual(foldOrganization(fullHistory()));
    });
  });
});
