/**
 * The accounts view's answer to "whose own inbound domain is this" (what the MX and the inbound reader ask), on the
 * real Redis: it does not hang on the order in which different organizations' events are applied (a replay reads
 * the accounts topic's partitions in any order), and a domain an organization let go is no longer its.
 */
import { randomUUID } from 'node:crypto';
import type { ServerSettingsChanged } from '@sendline/domain';
import { AccountsView, createRedis, deleteKeys, type Redis } from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addresses, uniqueName } from '../support/services';

let redis: Redis;
const namespaces: string[] = [];
const DOMAIN = `reply.${randomUUID().slice(0, 8)}.example`;

beforeAll(() => {
  redis = createRedis(addresses.redisUrl);
});
afterAll(async () => {
  // SCAN on every master (KEYS answers for one node of a cluster).
  for (const ns of namespaces) await deleteKeys(redis, `${ns}:*`);
  redis.disconnect();
});

function settingsOf(org: string, inboundDomain: string, at: number, verifiedAt?: number): ServerSettingsChanged {
  return {
    type: 'ServerSettingsChanged',
    data: {
      inboundHash: randomUUID().replace(/-/g, ''),
      inboundHookUrl: '',
      inboundDomain,
      ...(verifiedAt !== undefined && { inboundDomainVerifiedAt: verifiedAt }),
      inboundSpamThreshold: 0,
      rawEmailEnabled: false,
      inboundHookSigningSecretSealed: 'v1.aXY.dGFn.aW5ib3VuZA',
    },
    metadata: { eventId: randomUUID(), organizationId: org, occurredAt: at, schemaVersion: 1 },
  };
}

function freshView(): AccountsView {
  const ns = uniqueName('test-inbound-domain-view');
  namespaces.push(ns);
  return new AccountsView(redis, ns);
}

describe('the owner of an own inbound domain in the accounts view', () => {
  // A set it and verified it, then let it go; B set it and verified it after.
  const history = [
    settingsOf('org-a', DOMAIN, 1),
    settingsOf('org-a', DOMAIN, 2, 2),
    settingsOf('org-a', '', 3),
    settingsOf('org-b', DOMAIN, 4),
    settingsOf('org-b', DOMAIN, 5, 5),
  ];

  it('is the same whichever organization’s events come first', async () => {
    const inOrder = freshView();
    for (const event of history) await inOrder.apply([event]);
    const bFirst = freshView();
    for (const event of [...history.slice(3), ...history.slice(0, 3)]) await bFirst.apply([event]);
    for (const view of [inOrder, bFirst]) {
      expect(await view.inboundDomainOwner(DOMAIN.toUpperCase())).toEqual({ organizationId: 'org-b', verified: true });
      expect(await view.organizationOfInboundDomain(DOMAIN)).toBe('org-b');
    }
  });

  it('names no organization for a domain only set, or let go', async () => {
    const view = freshView();
    await view.apply([settingsOf('org-c', DOMAIN, 1)]);
    expect(await view.inboundDomainOwner(DOMAIN)).toEqual({ organizationId: 'org-c', verified: false });
    expect(await view.organizationOfInboundDomain(DOMAIN)).toBeNull();
    await view.apply([settingsOf('org-c', `other.${DOMAIN}`, 2)]);
    expect(await view.inboundDomainOwner(DOMAIN)).toBeNull();
  });
});
