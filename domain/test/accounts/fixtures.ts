import type { CommandMetadata, EventMetadata } from '../../src/event';
import type {
  AccountCommand,
  AllowanceSet,
  ApiKeyIssued,
  ApiKeyRevoked,
  DomainAdded,
  DomainRemoved,
  DomainReturnPathAssigned,
  DomainReturnPathVerified,
  DomainVerified,
  MemberAdded,
  MemberRemoved,
  OrganizationCreated,
} from '../../src/accounts';

export const ORG = '7d7a3f0e-4a4c-4a43-9c1e-0c7d1f1e2a01';
export const CREATED_AT = Date.UTC(2025, 0, 10, 9, 0, 0);
export const LATER = Date.UTC(2025, 0, 11, 12, 30, 0);
export const ADMIN = 'ada@acme.example';
export const DOMAIN = 'acme.example';
export const TOKEN = 'k3Jd9sLq0ZtW2xYv8BnM4cRf';
export const SELECTOR = 'sl2025';
/** An RSA public key in SPKI PEM, as node's generateKeyPairSync writes it. */
export const PUBLIC_KEY_PEM = `-----BEGIN PUBLIC KEY-----
MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQCs50RdjSW3D/UXtECd5WV6A07h
YiCj198do+BRZQOw/RA6Twsg05d/A3c5dy7vyLlBl1Yv4YOv8/9+0WZPUxdPWEnX
785uQw8KRzAiS0H8hxpeIrjmqy7DjVpIFjSKHkfWvPhGvD3FZImuqNmzkTWg74wO
wTazKXzmx6toKt7T8wIDAQAB
-----END PUBLIC KEY-----
`;
export const PUBLIC_KEY_BASE64 =
  'MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQCs50RdjSW3D/UXtECd5WV6A07hYiCj198do+BRZQOw/RA6Twsg05d/A3c5dy7vyLlBl1Yv4YOv8/9+0WZPUxdPWEnX785uQw8KRzAiS0H8hxpeIrjmqy7DjVpIFjSKHkfWvPhGvD3FZImuqNmzkTWg74wOwTazKXzmx6toKt7T8wIDAQAB';
export const PRIVATE_KEY_ENCRYPTED = 'v1:aes-256-gcm:Zm9vYmFy:c2VjcmV0';
export const KEY_ID = 'b0c2e6a8-2f1d-4c55-8e0b-5d9a7c3e1f42';
export const KEY_HASH = 'a'.repeat(64);
export const KEY_PREFIX = 'sl_live_Ab12';

export function commandMetadata(now = LATER, eventIds = ['event-1', 'event-2']): CommandMetadata {
  return { organizationId: ORG, now, eventIds };
}

export function command<C extends AccountCommand>(type: C['type'], data: C['data'], now = LATER): C {
  return { type, data, metadata: commandMetadata(now) } as C;
}

export function eventMetadata(eventId: string, occurredAt: number): EventMetadata {
  return { eventId, organizationId: ORG, occurredAt, schemaVersion: 1 };
}

export function organizationCreated(): OrganizationCreated {
  return {
    type: 'OrganizationCreated',
    data: { organizationId: ORG, name: 'Acme', adminEmail: ADMIN },
    metadata: eventMetadata('ev-created', CREATED_AT),
  };
}

export function memberAdded(email = ADMIN, role: MemberAdded['data']['role'] = 'admin', at = CREATED_AT): MemberAdded {
  return { type: 'MemberAdded', data: { email, role }, metadata: eventMetadata(`ev-member-${email}`, at) };
}

export function memberRemoved(email: string, at = LATER): MemberRemoved {
  return { type: 'MemberRemoved', data: { email }, metadata: eventMetadata(`ev-member-removed-${email}`, at) };
}

/** The organization as CreateOrganization leaves it: created, with its admin. */
export function anOrganization(): [OrganizationCreated, MemberAdded] {
  return [organizationCreated(), memberAdded()];
}

export const domainKeys = {
  domain: DOMAIN,
  verificationToken: TOKEN,
  dkimSelector: SELECTOR,
  dkimPublicKey: PUBLIC_KEY_PEM,
  dkimPrivateKeyEncrypted: PRIVATE_KEY_ENCRYPTED,
};

export const DOMAIN_ADDED_AT = Date.UTC(2025, 0, 10, 9, 5, 0);
export const DOMAIN_VERIFIED_AT = Date.UTC(2025, 0, 10, 11, 0, 0);

/** A domain added before return paths existed: its events carry none. */
export function domainAdded(domain = DOMAIN): DomainAdded {
  return {
    type: 'DomainAdded',
    data: { ...domainKeys, domain },
    metadata: eventMetadata(`ev-domain-${domain}`, DOMAIN_ADDED_AT),
  };
}

export function domainVerified(): DomainVerified {
  return {
    type: 'DomainVerified',
    data: { ...domainKeys, addedAt: DOMAIN_ADDED_AT },
    metadata: eventMetadata('ev-domain-verified', DOMAIN_VERIFIED_AT),
  };
}

export const RETURN_PATH_HOST = `bounces.${DOMAIN}`;
/** The service's names, as its settings give them (SENDLINE_MAIL_HOST, SENDLINE_SPF_DOMAIN). */
export const SERVICE = { mailHost: 'mail.sendline.example', spfDomain: 'spf.sendline.example' };
/** The two records a return path publishes (dnsRecordsFor), as a resolver would find them. */
export const RETURN_PATH_MX = [{ exchange: SERVICE.mailHost, priority: 10 }];
export const RETURN_PATH_SPF = [`v=spf1 include:${SERVICE.spfDomain} -all`];

/** A domain added with its return path, `bounces.<domain>` (unverified). */
export function domainAddedWithReturnPath(): DomainAdded {
  return {
    type: 'DomainAdded',
    data: { ...domainKeys, returnPath: { host: RETURN_PATH_HOST, assignedAt: DOMAIN_ADDED_AT, verifiedAt: null } },
    metadata: eventMetadata('ev-domain-added', DOMAIN_ADDED_AT),
  };
}

export const RETURN_PATH_ASSIGNED_AT = Date.UTC(2025, 0, 10, 12, 0, 0);
export const RETURN_PATH_VERIFIED_AT = Date.UTC(2025, 0, 10, 13, 0, 0);

/** The legacy domain (domainAdded, domainVerified) given its return path later. */
export function returnPathAssigned(): DomainReturnPathAssigned {
  return {
    type: 'DomainReturnPathAssigned',
    data: {
      ...domainKeys,
      addedAt: DOMAIN_ADDED_AT,
      verifiedAt: DOMAIN_VERIFIED_AT,
      returnPath: { host: RETURN_PATH_HOST, assignedAt: RETURN_PATH_ASSIGNED_AT, verifiedAt: null },
    },
    metadata: eventMetadata('ev-return-path-assigned', RETURN_PATH_ASSIGNED_AT),
  };
}

export function returnPathVerified(): DomainReturnPathVerified {
  return {
    type: 'DomainReturnPathVerified',
    data: {
      ...domainKeys,
      addedAt: DOMAIN_ADDED_AT,
      verifiedAt: DOMAIN_VERIFIED_AT,
      returnPath: {
        host: RETURN_PATH_HOST,
        assignedAt: RETURN_PATH_ASSIGNED_AT,
        verifiedAt: RETURN_PATH_VERIFIED_AT,
      },
    },
    metadata: eventMetadata('ev-return-path-verified', RETURN_PATH_VERIFIED_AT),
  };
}

export function domainRemoved(): DomainRemoved {
  return { type: 'DomainRemoved', data: { domain: DOMAIN }, metadata: eventMetadata('ev-domain-removed', LATER) };
}

export const KEY_ISSUED_AT = Date.UTC(2025, 0, 10, 9, 10, 0);
export const KEY_REVOKED_AT = Date.UTC(2025, 0, 10, 15, 0, 0);

export const apiKeyData = {
  keyId: KEY_ID,
  name: 'production sender',
  scopes: ['email:send', 'email:read'] as ApiKeyIssued['data']['scopes'],
  mode: 'live' as const,
  keyHash: KEY_HASH,
  keyPrefix: KEY_PREFIX,
};

export function apiKeyIssued(): ApiKeyIssued {
  return { type: 'ApiKeyIssued', data: { ...apiKeyData }, metadata: eventMetadata('ev-key-issued', KEY_ISSUED_AT) };
}

export function apiKeyRevoked(): ApiKeyRevoked {
  return {
    type: 'ApiKeyRevoked',
    data: { ...apiKeyData, issuedAt: KEY_ISSUED_AT },
    metadata: eventMetadata('ev-key-revoked', KEY_REVOKED_AT),
  };
}

export function allowanceSet(messagesPerMonth: number | null, at = CREATED_AT): AllowanceSet {
  return { type: 'AllowanceSet', data: { messagesPerMonth }, metadata: eventMetadata('ev-allowance', at) };
}
