import { describe, expect, it } from 'vitest';
import {
  accountEventKey,
  blockingInboundRule,
  inboundRecipientOf,
  normalizeInboundRule,
  organizationDecider,
  type ChangeServerSettings,
  type CreateInboundRule,
  type DeleteInboundRule,
  type InboundRuleCreated,
  type ServerSettingsChanged,
} from '../../src/accounts';
import { DeciderSpecification } from '../decider-spec';
import { LATER, ORG, anOrganization, command, eventMetadata } from './fixtures';

const { given } = DeciderSpecification.for(organizationDecider);

const HASH = '0123456789abcdef0123456789abcdef';
const SECRET = 'v1.aXY.dGFn.aW5ib3VuZA';
const change = (data: Partial<ChangeServerSettings['data']> = {}) =>
  command<ChangeServerSettings>('ChangeServerSettings', {
    inboundHash: HASH,
    signingSecretSealed: SECRET,
    allowHttp: false,
    ...data,
  });
const settings = (data: Partial<ServerSettingsChanged['data']> = {}): ServerSettingsChanged => ({
  type: 'ServerSettingsChanged',
  data: {
    inboundHash: HASH,
    inboundHookUrl: '',
    inboundDomain: '',
    inboundSpamThreshold: 0,
    rawEmailEnabled: false,
    inboundHookSigningSecretSealed: SECRET,
    ...data,
  },
  metadata: eventMetadata('event-1', LATER),
});
const ruleCreated = (ruleId: number, rule: string): InboundRuleCreated => ({
  type: 'InboundRuleCreated',
  data: { ruleId, rule },
  metadata: eventMetadata('event-1', LATER),
});

describe('server settings', () => {
  describe('of an organization whose settings were never set', () => {
    it('gets its inbound address and signing secret on the first change, even an empty one', () => {
      given(anOrganization()).when(change()).then([settings()]);
    });

    it('refuses an inbound hash that is not 32 lowercase hex characters', () => {
      given(anOrganization())
        .when(change({ inboundHash: 'NOT-A-HASH' }))
        .thenThrows('InvalidInboundHash');
    });
  });

  describe('of an organization with settings', () => {
    it('keeps its inbound hash and secret whatever a later command carries', () => {
      given([...anOrganization(), settings()])
        .when(change({ inboundHash: 'f'.repeat(32), signingSecretSealed: 'other', rawEmailEnabled: true }))
        .then([settings({ rawEmailEnabled: true })]);
    });

    it('changes the hook URL, and an empty one removes it', () => {
      given([...anOrganization(), settings()])
        .when(change({ inboundHookUrl: 'https://hooks.acme.example/inbound' }))
        .then([settings({ inboundHookUrl: 'https://hooks.acme.example/inbound' })]);
      given([...anOrganization(), settings({ inboundHookUrl: 'https://hooks.acme.example/inbound' })])
        .when(change({ inboundHookUrl: '' }))
        .then([settings()]);
    });

    it('refuses a plain http hook outside development, with the webhooks’ rule', () => {
      given([...anOrganization(), settings()])
        .when(change({ inboundHookUrl: 'http://hooks.acme.example/inbound' }))
        .thenThrows('InvalidWebhookUrl');
    });

    it('refuses a spam threshold out of 0..100 and an inbound domain that is no domain', () => {
      given([...anOrganization(), settings()])
        .when(change({ inboundSpamThreshold: 101 }))
        .thenThrows('InvalidInboundSpamThreshold');
      given([...anOrganization(), settings()])
        .when(change({ inboundDomain: 'not a domain' }))
        .thenThrows('InvalidInboundDomain');
    });

    it('keeps the hook’s credentials apart, and keeps the password when the caller has none to give (the mask)', () => {
      const auth = { username: 'hook', passwordSealed: 'v1.aXY.dGFn.cGFzcw' };
      const url = 'https://hooks.acme.example/inbound';
      given([...anOrganization(), settings()])
        .when(change({ inboundHookUrl: url, inboundHookHttpAuth: auth }))
        .then([settings({ inboundHookUrl: url, inboundHookHttpAuth: auth })]);
      given([...anOrganization(), settings({ inboundHookUrl: url, inboundHookHttpAuth: auth })])
        .when(change({ inboundHookUrl: url, inboundHookHttpAuth: { username: 'hook', passwordSealed: null } }))
        .thenNothingHappened();
      given([...anOrganization(), settings({ inboundHookUrl: url, inboundHookHttpAuth: auth })])
        .when(change({ inboundHookUrl: url }))
        .then([settings({ inboundHookUrl: url })]);
      given([...anOrganization(), settings()])
        .when(change({ inboundHookUrl: url, inboundHookHttpAuth: { username: 'hook', passwordSealed: null } }))
        .thenThrows('InvalidWebhookHttpAuth');
    });

    it('decides nothing for a change that changes nothing', () => {
      given([...anOrganization(), settings()])
        .when(change({ rawEmailEnabled: false }))
        .thenNothingHappened();
    });
  });
});

describe('inbound rules', () => {
  it('blocks an address or a domain, stored lowercased', () => {
    given(anOrganization())
      .when(command<CreateInboundRule>('CreateInboundRule', { ruleId: 7, rule: 'Spammer@Bad.Example' }))
      .then([ruleCreated(7, 'spammer@bad.example')]);
  });

  it('refuses a rule that exists already, and one that is neither an address nor a domain', () => {
    given([...anOrganization(), ruleCreated(7, 'bad.example')])
      .when(command<CreateInboundRule>('CreateInboundRule', { ruleId: 8, rule: 'BAD.example' }))
      .thenThrows('InboundRuleAlreadyExists');
    given(anOrganization())
      .when(command<CreateInboundRule>('CreateInboundRule', { ruleId: 8, rule: 'two words' }))
      .thenThrows('InvalidInboundRule');
  });

  it('deletes a rule the organization has, and refuses one it has not', () => {
    given([...anOrganization(), ruleCreated(7, 'bad.example')])
      .when(command<DeleteInboundRule>('DeleteInboundRule', { ruleId: 7 }))
      .then([{ type: 'InboundRuleDeleted', data: { ruleId: 7 }, metadata: eventMetadata('event-1', LATER) }]);
    given(anOrganization())
      .when(command<DeleteInboundRule>('DeleteInboundRule', { ruleId: 7 }))
      .thenThrows('InboundRuleNotFound');
  });

  it('matches a sender by its address or by its domain, whatever its case', () => {
    const rules = [
      { ruleId: 1, rule: 'spammer@bad.example' },
      { ruleId: 2, rule: 'worse.example' },
    ];
    expect(blockingInboundRule(rules, 'Spammer@BAD.example')?.ruleId).toBe(1);
    expect(blockingInboundRule(rules, 'anyone@worse.example')?.ruleId).toBe(2);
    expect(blockingInboundRule(rules, 'friend@bad.example')).toBeUndefined();
    expect(blockingInboundRule(rules, 'x@sub.worse.example')).toBeUndefined();
  });

  it('normalizes a rule: trimmed, lowercased', () => {
    expect(normalizeInboundRule(' Bad.Example ')).toBe('bad.example');
  });
});

describe('inbound addresses', () => {
  it('reads the hash and the mailbox hash of an address at the inbound domain', () => {
    expect(inboundRecipientOf(`${HASH}+Ticket-42@inbound.sendline.dev`, 'inbound.sendline.dev')).toEqual({
      inboundHash: HASH,
      mailboxHash: 'Ticket-42',
    });
    expect(inboundRecipientOf(`${HASH.toUpperCase()}@Inbound.Sendline.dev`, 'inbound.sendline.dev')).toEqual({
      inboundHash: HASH,
      mailboxHash: '',
    });
  });

  it('reads nothing at another domain or for a local part that is no hash', () => {
    expect(inboundRecipientOf(`${HASH}@example.org`, 'inbound.sendline.dev')).toBeNull();
    expect(inboundRecipientOf('postmaster@inbound.sendline.dev', 'inbound.sendline.dev')).toBeNull();
  });

  it('keys the settings by organization and each rule by its id on the accounts topic', () => {
    expect(accountEventKey(settings())).toBe(`server/${ORG}`);
    expect(accountEventKey(ruleCreated(7, 'bad.example'))).toBe(`inboundrule/${ORG}/7`);
  });
});
