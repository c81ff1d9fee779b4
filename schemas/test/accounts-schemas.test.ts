import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { ACCOUNT_EVENT_TYPES, organizationDecider } from '../../domain/src/accounts';
import type { AccountCommand, AccountEvent, OrganizationState } from '../../domain/src/accounts';
import { fromAvroRecord, schemaOf, toAvroRecord as realToAvroRecord } from '../src';

/**
 * Every account event type has an Avro schema that carries its events without loss: a domain event
 * becomes the Avro record { eventId, organizationId, occurredAt, schemaVersion, data }, is encoded,
 * decoded and comes back equal.
 */

const ORG = '1b6f2f7e-3c1d-4d0e-9a57-2b8e8f0c5d11';
const PUBLIC_KEY_PEM =
  '-----BEGIN PUBLIC KEY-----\nMIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQCs50RdjSW3D/UXtECd5WV6A07h\n-----END PUBLIC KEY-----\n';

let clock = Date.UTC(2025, 2, 3, 10, 0, 0, 123);
let ids = 0;
function run(type: AccountCommand['type'], data: AccountCommand['data'], state: OrganizationState) {
  clock += 60_000;
  const metadata = { organizationId: ORG, now: clock, eventIds: [`event-${++ids}`, `event-${++ids}`] };
  return organizationDecider.decide({ type, data, metadata } as AccountCommand, state);
}

/** A DomainAdded written before return paths existed (no returnPath): the decider no longer decides one. */
const LEGACY_DOMAIN: AccountEvent = {
  type: 'DomainAdded',
  data: {
    domain: 'old.example',
    verificationToken: 'a3Jd9sLq0ZtW2xYv8BnM4cRf',
    dkimSelector: 'sl2024',
    dkimPublicKey: PUBLIC_KEY_PEM,
    dkimPrivateKeyEncrypted: 'v1:aes-256-gcm:Zm9v:YmFy',
  },
  metadata: { eventId: 'event-legacy', organizationId: ORG, occurredAt: Date.UTC(2024, 5, 1), schemaVersion: 1 },
};

/** Real events, decided by the organization decider from a history touching every event type. */
function sampleEvents(): AccountEvent[] {
  const commands: Array<[AccountCommand['type'], AccountCommand['data']]> = [
    ['CreateOrganization', { name: 'Acme Ltd', adminEmail: 'ada@acme.example' }],
    ['AddMember', { email: 'bob@acme.example', role: 'developer' }],
    ['ChangeMemberRole', { email: 'bob@acme.example', role: 'viewer' }],
    ['RemoveMember', { email: 'bob@acme.example' }],
    [
      'AddDomain',
      {
        domain: 'acme.example',
        verificationToken: 'k3Jd9sLq0ZtW2xYv8BnM4cRf',
        dkimSelector: 'sl2025',
        dkimPublicKey: PUBLIC_KEY_PEM,
        dkimPrivateKeyEncrypted: 'v1:aes-256-gcm:Zm9v:YmFy',
        returnPathLabel: 'bounces',
      },
    ],
    ['VerifyDomain', { domain: 'acme.example', txtRecords: ['sendline-verification=k3Jd9sLq0ZtW2xYv8BnM4cRf'] }],
    ['RemoveDomain', { domain: 'acme.example' }],
    // old.example was added before return paths existed (LEGACY_DOMAIN below): it gets one, verified.
    ['AssignReturnPath', { domain: 'old.example', returnPathLabel: 'bounces' }],
    [
      'VerifyReturnPath',
      {
        domain: 'old.example',
        mxRecords: [{ exchange: 'mail.sendline.example', priority: 10 }],
        txtRecords: ['v=spf1 include:mail.sendline.example -all'],
        service: { mailHost: 'mail.sendline.example', spfDomain: 'mail.sendline.example' },
      },
    ],
    [
      'IssueApiKey',
      {
        keyId: 'key-1',
        name: 'production sender',
        scopes: ['email:send', 'email:read', 'domains:read', 'members:read'],
        mode: 'live',
        keyHash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
        keyPrefix: 'sl_live_Ab12',
      },
    ],
    ['RevokeApiKey', { keyId: 'key-1' }],
    ['SetAllowance', { messagesPerMonth: 50_000 }],
    ['SetAllowance', { messagesPerMonth: null }],
    [
      'CreateWebhook',
      {
        webhookId: 1234567,
        url: 'https://hooks.acme.example/postmark',
        httpAuth: { username: 'acme', passwordSealed: 'v1.aXY.dGFn.cGFzcw' },
        httpHeaders: [{ name: 'X-Acme', value: 'yes' }],
        triggers: { delivery: { enabled: true }, bounce: { enabled: true, includeContent: true } },
        signingSecretSealed: 'v1.aXY.dGFn.c2VjcmV0',
        allowHttp: false,
      },
    ],
    [
      'CreateWebhook',
      {
        webhookId: 7,
        url: 'https://hooks.acme.example/other',
        signingSecretSealed: 'v1.aXY.dGFn.b3RoZXI',
        allowHttp: false,
      },
    ],
    ['UpdateWebhook', { webhookId: 1234567, httpAuth: null, triggers: { open: { enabled: true } }, allowHttp: false }],
    ['DisableWebhook', { webhookId: 1234567, failingSince: 0, reason: 'answered 500', disableAfterMs: 60_000 }],
    ['DeleteWebhook', { webhookId: 7 }],
    [
      'ChangeServerSettings',
      {
        inboundHash: '0123456789abcdef0123456789abcdef',
        signingSecretSealed: 'v1.aXY.dGFn.aW5ib3VuZA',
        inboundHookUrl: 'https://hooks.acme.example/inbound',
        rawEmailEnabled: true,
        allowHttp: false,
      },
    ],
    [
      'ChangeServerSettings',
      {
        inboundHash: '0123456789abcdef0123456789abcdef',
        signingSecretSealed: 'v1.aXY.dGFn.aW5ib3VuZA',
        inboundHookUrl: 'https://hooks.acme.example/inbound/2',
        inboundHookHttpAuth: { username: 'hook', passwordSealed: 'v1.aXY.dGFn.cGFzcw' },
        allowHttp: false,
      },
    ],
    [
      'ChangeServerSettings',
      {
        inboundHash: '0123456789abcdef0123456789abcdef',
        signingSecretSealed: 'v1.aXY.dGFn.aW5ib3VuZA',
        inboundDomain: 'reply.acme.example',
        allowHttp: false,
      },
    ],
    [
      'VerifyInboundDomain',
      {
        domain: 'reply.acme.example',
        mxRecords: [{ exchange: 'mx.sendline.test', priority: 10 }],
        mailHost: 'mx.sendline.test',
      },
    ],
    ['CreateInboundRule', { ruleId: 42, rule: 'Spammer@Bad.Example' }],
    ['CreateInboundRule', { ruleId: 43, rule: 'bad.example' }],
    ['DeleteInboundRule', { ruleId: 42 }],
  ];
  let state = organizationDecider.initialState();
  const events: AccountEvent[] = [];
  for (const [type, data] of commands) {
    if (type === 'AssignReturnPath') {
      events.push(LEGACY_DOMAIN);
      state = organizationDecider.evolve(state, LEGACY_DOMAIN);
    }
    for (const event of run(type, data, state)) {
      events.push(event);
      state = organizationDecider.evolve(state, event);
    }
  }
  return events;
}

/**
 * The Avro record of an event; an absent optional field (the legacy domain's return path, a hook without
 * credentials) is written as null.
 */
function toAvroRecord(event: AccountEvent) {
  const data =
    event.type === 'DomainAdded'
      ? { returnPath: null, ...event.data }
      : event.type === 'ServerSettingsChanged'
        ? { inboundHookHttpAuth: null, inboundDomainVerifiedAt: null, ...event.data }
        : event.data;
  return { ...event.metadata, data, actor: event.metadata.actor ?? null };
}

const samples = sampleEvents();

describe('Avro schemas of the account events', () => {
  it('the sample history holds every account event type', () => {
    expect(new Set(samples.map((e) => e.type))).toEqual(new Set(ACCOUNT_EVENT_TYPES));
  });

  it.each(ACCOUNT_EVENT_TYPES.map((type) => [type]))('%s has the envelope layout', (type) => {
    const schema = schemaOf(type);
    expect(schema.namespace).toBe('sendline.events');
    expect(schema.fields.map((f) => [f.name, f.type])).toEqual([
      ['eventId', 'string'],
      ['organizationId', 'string'],
      ['occurredAt', { type: 'long', logicalType: 'timestamp-millis' }],
      ['schemaVersion', 'int'],
      ['data', expect.objectContaining({ type: 'record', name: `${type}Data` })],
      // Who made the change (the console's audit), added after the others with a null default: events written
      // before it read on.
      ['actor', ['null', 'string']],
    ]);
    expect(schema.fields.at(-1)).toMatchObject({ name: 'actor', default: null });
  });

  it.each(samples.map((event) => [`${event.type} ${event.metadata.eventId}`, event] as const))(
    '%s survives an encode/decode round trip',
    (_name, event) => {
      const type = avro.Type.forSchema(schemaOf(event.type) as avro.Schema);
      const record = toAvroRecord(event);
      expect(type.isValid(record, { noUndeclaredFields: true })).toBe(true);
      const decoded = type.fromBuffer(type.toBuffer(record));
      expect(decoded).toEqual(record);
      const { data, actor, ...metadata } = decoded as ReturnType<typeof toAvroRecord>;
      expect(actor).toBeNull();
      expect({ type: event.type, data, metadata }).toEqual({ ...event, data: record.data });
      // Read back through the schema, an optional field written as null is absent again, as the domain wrote it.
      expect(fromAvroRecord(event.type, decoded)).toEqual(event);
      expect(type.toBuffer(realToAvroRecord(event))).toEqual(type.toBuffer(record));
    },
  );

  it('records who made a change, and reads it back into the metadata', () => {
    const event = { ...samples[1]!, metadata: { ...samples[1]!.metadata, actor: 'ada@acme.example' } };
    const type = avro.Type.forSchema(schemaOf(event.type) as avro.Schema);
    const decoded = type.fromBuffer(type.toBuffer(realToAvroRecord(event)));
    expect(decoded.actor).toBe('ada@acme.example');
    expect(fromAvroRecord(event.type, decoded)).toEqual(event);
  });

  it('an allowance of null (unlimited) survives the round trip as null', () => {
    const unlimited = samples.filter((e) => e.type === 'AllowanceSet').at(-1);
    const type = avro.Type.forSchema(schemaOf('AllowanceSet') as avro.Schema);
    expect(type.fromBuffer(type.toBuffer(toAvroRecord(unlimited!))).data.messagesPerMonth).toBeNull();
  });

  it("a webhook's HTTP Basic credentials survive the round trip, and so does their absence (null)", () => {
    const created = samples.find((e) => e.type === 'WebhookCreated')!;
    const updated = samples.find((e) => e.type === 'WebhookUpdated')!;
    const decode = (event: AccountEvent) => {
      const type = avro.Type.forSchema(schemaOf(event.type) as avro.Schema);
      return type.fromBuffer(type.toBuffer(toAvroRecord(event))).data;
    };
    expect(decode(created).httpAuth).toEqual({ username: 'acme', passwordSealed: 'v1.aXY.dGFn.cGFzcw' });
    expect(decode(updated).httpAuth).toBeNull();
  });
});
