import { describe, expect, it } from 'vitest';
import { organizationDecider } from '../../src/accounts';
import type {
  AccountCommand,
  AddDomain,
  AddMember,
  AssignReturnPath,
  CreateOrganization,
  IssueApiKey,
  RemoveDomain,
  RemoveMember,
  RevokeApiKey,
  SetAllowance,
  VerifyDomain,
  VerifyReturnPath,
} from '../../src/accounts';
import { DeciderSpecification } from '../decider-spec';
import {
  ADMIN,
  DOMAIN,
  KEY_HASH,
  KEY_ID,
  LATER,
  ORG,
  PRIVATE_KEY_ENCRYPTED,
  PUBLIC_KEY_PEM,
  RETURN_PATH_HOST,
  RETURN_PATH_MX,
  RETURN_PATH_SPF,
  SELECTOR,
  SERVICE,
  TOKEN,
  DOMAIN_ADDED_AT,
  DOMAIN_VERIFIED_AT,
  allowanceSet,
  anOrganization,
  apiKeyData,
  apiKeyIssued,
  apiKeyRevoked,
  command,
  commandMetadata,
  domainAdded,
  domainAddedWithReturnPath,
  domainKeys,
  domainRemoved,
  domainVerified,
  eventMetadata,
  memberAdded,
  memberRemoved,
  returnPathAssigned,
  returnPathVerified,
} from './fixtures';

const { given } = DeciderSpecification.for(organizationDecider);

const withDetails = (details: Record<string, unknown>) => (error: { details?: Record<string, unknown> }) =>
  expect(error.details).toMatchObject(details);

const occurred = (eventId = 'event-1') => eventMetadata(eventId, LATER);

const createOrganization = (data: Partial<CreateOrganization['data']> = {}) =>
  command<CreateOrganization>('CreateOrganization', { name: 'Acme', adminEmail: ADMIN, ...data });
const addMember = (email: string, role: string) => command<AddMember>('AddMember', { email, role });
const removeMember = (email: string) => command<RemoveMember>('RemoveMember', { email });
const addDomain = (data: Partial<AddDomain['data']> = {}) =>
  command<AddDomain>('AddDomain', { ...domainKeys, returnPathLabel: 'bounces', ...data });
const assignReturnPath = (returnPathLabel = 'bounces', domain = DOMAIN) =>
  command<AssignReturnPath>('AssignReturnPath', { domain, returnPathLabel });
const verifyReturnPath = (
  found: Partial<Pick<VerifyReturnPath['data'], 'mxRecords' | 'txtRecords'>> = {},
  domain = DOMAIN,
) =>
  command<VerifyReturnPath>('VerifyReturnPath', {
    domain,
    mxRecords: RETURN_PATH_MX,
    txtRecords: RETURN_PATH_SPF,
    service: SERVICE,
    ...found,
  });
/** The return path a domain added by the command above gets: `bounces.<domain>`, assigned then, not verified. */
const newReturnPath = { host: RETURN_PATH_HOST, assignedAt: LATER, verifiedAt: null };
const verifyDomain = (txtRecords: VerifyDomain['data']['txtRecords'], domain = DOMAIN) =>
  command<VerifyDomain>('VerifyDomain', { domain, txtRecords });
const removeDomain = (domain = DOMAIN) => command<RemoveDomain>('RemoveDomain', { domain });
const issueApiKey = (data: Partial<IssueApiKey['data']> = {}) =>
  command<IssueApiKey>('IssueApiKey', {
    keyId: KEY_ID,
    name: 'production sender',
    scopes: ['email:send', 'email:read'],
    mode: 'live',
    keyHash: KEY_HASH,
    keyPrefix: 'sl_live_Ab12',
    ...data,
  });
const revokeApiKey = (keyId = KEY_ID) => command<RevokeApiKey>('RevokeApiKey', { keyId });
const setAllowance = (messagesPerMonth: number | null) => command<SetAllowance>('SetAllowance', { messagesPerMonth });

const expectedRecord = `sendline-verification=${TOKEN}`;

describe('organization decider', () => {
  describe('when no organization exists', () => {
    it('creates it and adds the admin as its first member, with the ids and time the command carries', () => {
      given([])
        .when(createOrganization({ name: '  Acme Ltd ', adminEmail: 'Ada@ACME.example' }))
        .then([
          {
            type: 'OrganizationCreated',
            data: { organizationId: ORG, name: 'Acme Ltd', adminEmail: ADMIN },
            metadata: occurred('event-1'),
          },
          { type: 'MemberAdded', data: { email: ADMIN, role: 'admin' }, metadata: occurred('event-2') },
        ]);
    });

    it('refuses an empty organization name', () => {
      given([])
        .when(createOrganization({ name: '   ' }))
        .thenThrows('InvalidOrganizationName');
    });

    it('refuses an organization name longer than 100 characters', () => {
      given([])
        .when(createOrganization({ name: 'x'.repeat(101) }))
        .thenThrows('InvalidOrganizationName');
    });

    it('refuses an invalid admin address', () => {
      given([])
        .when(createOrganization({ adminEmail: 'ada.acme.example' }))
        .thenThrows('InvalidEmail');
    });

    it('refuses an empty organization id', () => {
      given([])
        .when({ ...createOrganization(), metadata: { ...commandMetadata(), organizationId: '' } })
        .thenThrows('InvalidOrganizationId');
    });

    it('fails loudly when the caller supplied fewer event ids than events', () => {
      given([])
        .when({ ...createOrganization(), metadata: commandMetadata(LATER, ['only-one']) })
        .thenThrows('MissingEventId');
    });

    const otherCommands: AccountCommand[] = [
      addMember('bob@acme.example', 'developer'),
      removeMember(ADMIN),
      addDomain(),
      verifyDomain([expectedRecord]),
      assignReturnPath(),
      verifyReturnPath(),
      removeDomain(),
      issueApiKey(),
      revokeApiKey(),
      setAllowance(1000),
    ];
    it.each(otherCommands.map((c) => [c.type, c] as const))('refuses %s: OrganizationNotFound', (_type, cmd) => {
      given([])
        .when(cmd)
        .thenThrows('OrganizationNotFound', withDetails({ organizationId: ORG }));
    });
  });

  describe('when the organization exists', () => {
    it('refuses to create it again', () => {
      given(anOrganization()).when(createOrganization()).thenThrows('OrganizationAlreadyExists');
    });

    it('adds a member with a lowercased address', () => {
      given(anOrganization())
        .when(addMember('Bob@Acme.Example', 'developer'))
        .then([{ type: 'MemberAdded', data: { email: 'bob@acme.example', role: 'developer' }, metadata: occurred() }]);
    });

    it('refuses an unknown role', () => {
      given(anOrganization()).when(addMember('bob@acme.example', 'owner')).thenThrows('InvalidRole');
    });

    it('refuses a member with an invalid address', () => {
      given(anOrganization()).when(addMember('bob@', 'viewer')).thenThrows('InvalidEmail');
    });

    it('refuses to add an existing member again, whatever the case of the address', () => {
      given(anOrganization())
        .when(addMember('ADA@acme.example', 'viewer'))
        .thenThrows('MemberAlreadyExists', withDetails({ email: ADMIN }));
    });

    it('refuses to remove someone who is not a member', () => {
      given(anOrganization())
        .when(removeMember('eve@acme.example'))
        .thenThrows('MemberNotFound', withDetails({ email: 'eve@acme.example' }));
    });

    it('refuses to remove the last admin', () => {
      given(anOrganization()).when(removeMember(ADMIN)).thenThrows('CannotRemoveLastAdmin');
    });

    it('refuses to remove the last admin even when other members remain', () => {
      given([...anOrganization(), memberAdded('bob@acme.example', 'developer')])
        .when(removeMember(ADMIN))
        .thenThrows('CannotRemoveLastAdmin');
    });

    it('sets the allowance', () => {
      given(anOrganization())
        .when(setAllowance(10_000))
        .then([{ type: 'AllowanceSet', data: { messagesPerMonth: 10_000 }, metadata: occurred() }]);
    });

    it('sets an allowance of zero, which stops sending', () => {
      given(anOrganization())
        .when(setAllowance(0))
        .then([{ type: 'AllowanceSet', data: { messagesPerMonth: 0 }, metadata: occurred() }]);
    });

    it('decides nothing when the allowance is set to unlimited and none was ever set', () => {
      given(anOrganization()).when(setAllowance(null)).thenNothingHappened();
    });

    it.each([[-1], [1.5], [Number.NaN], [Number.POSITIVE_INFINITY]])('refuses the allowance %s', (value) => {
      given(anOrganization()).when(setAllowance(value)).thenThrows('InvalidAllowance');
    });
  });

  describe('when the organization has two admins', () => {
    it('removes one of them', () => {
      given([...anOrganization(), memberAdded('bob@acme.example', 'admin')])
        .when(removeMember('Bob@acme.example'))
        .then([{ type: 'MemberRemoved', data: { email: 'bob@acme.example' }, metadata: occurred() }]);
    });
  });

  describe('when a member was removed', () => {
    it('adds the same address again', () => {
      given([...anOrganization(), memberAdded('bob@acme.example', 'developer'), memberRemoved('bob@acme.example')])
        .when(addMember('bob@acme.example', 'viewer'))
        .then([{ type: 'MemberAdded', data: { email: 'bob@acme.example', role: 'viewer' }, metadata: occurred() }]);
    });
  });

  describe('domains', () => {
    describe('when the organization has no domain', () => {
      it('adds a domain with its verification token, DKIM keys and return path, name and selector lowercased', () => {
        given(anOrganization())
          .when(addDomain({ domain: 'Acme.EXAMPLE', dkimSelector: 'SL2025' }))
          .then([{ type: 'DomainAdded', data: { ...domainKeys, returnPath: newReturnPath }, metadata: occurred() }]);
      });

      it('names the return path with the label the service gives, lowercased', () => {
        given(anOrganization())
          .when(addDomain({ returnPathLabel: 'Mail-Back' }))
          .then([
            {
              type: 'DomainAdded',
              data: { ...domainKeys, returnPath: { ...newReturnPath, host: `mail-back.${DOMAIN}` } },
              metadata: occurred(),
            },
          ]);
      });

      it.each([['bounces.mail'], ['_bounces'], [''], ['-bounces']])('refuses the return path label %j', (label) => {
        given(anOrganization())
          .when(addDomain({ returnPathLabel: label }))
          .thenThrows('InvalidReturnPathLabel', withDetails({ label }));
      });

      it('accepts the DKIM public key as bare base64', () => {
        given(anOrganization())
          .when(addDomain({ dkimPublicKey: 'MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQCs' }))
          .then([
            {
              type: 'DomainAdded',
              data: {
                ...domainKeys,
                dkimPublicKey: 'MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQCs',
                returnPath: newReturnPath,
              },
              metadata: occurred(),
            },
          ]);
      });

      it.each([
        ['a single label', 'localhost'],
        ['a trailing dot', 'acme.example.'],
        ['a label starting with a hyphen', '-acme.example'],
        ['an underscore', 'ac_me.example'],
        ['a non-ASCII name', 'bücher.example'],
      ])('refuses a domain name with %s', (_why, domain) => {
        given(anOrganization()).when(addDomain({ domain })).thenThrows('InvalidDomainName');
      });

      it('refuses a short verification token', () => {
        given(anOrganization())
          .when(addDomain({ verificationToken: 'short' }))
          .thenThrows('InvalidVerificationToken');
      });

      it('refuses a DKIM selector that is not a DNS label', () => {
        given(anOrganization())
          .when(addDomain({ dkimSelector: 'sl 2025' }))
          .thenThrows('InvalidDkimSelector');
      });

      it('refuses a DKIM public key that is not base64', () => {
        given(anOrganization())
          .when(addDomain({ dkimPublicKey: 'not a key!' }))
          .thenThrows('InvalidDkimPublicKey');
      });

      it('refuses a missing DKIM private key', () => {
        given(anOrganization())
          .when(addDomain({ dkimPrivateKeyEncrypted: '' }))
          .thenThrows('InvalidDkimPrivateKey');
      });

      it('refuses to verify a domain it does not have', () => {
        given(anOrganization())
          .when(verifyDomain([expectedRecord]))
          .thenThrows('DomainNotFound', withDetails({ domain: DOMAIN }));
      });

      it('refuses to remove a domain it does not have', () => {
        given(anOrganization())
          .when(removeDomain())
          .thenThrows('DomainNotFound', withDetails({ domain: DOMAIN }));
      });
    });

    describe('when a domain was added and is not verified', () => {
      const history = () => [...anOrganization(), domainAdded()];

      it('refuses to add it again, whatever its case', () => {
        given(history())
          .when(addDomain({ domain: 'ACME.example' }))
          .thenThrows('DomainAlreadyAdded', withDetails({ domain: DOMAIN }));
      });

      it('verifies it when one of the TXT records found is the expected value, repeating the whole domain', () => {
        given(history())
          .when(verifyDomain(['google-site-verification=xyz', expectedRecord]))
          .then([
            {
              type: 'DomainVerified',
              data: {
                domain: DOMAIN,
                verificationToken: TOKEN,
                dkimSelector: SELECTOR,
                dkimPublicKey: PUBLIC_KEY_PEM,
                dkimPrivateKeyEncrypted: PRIVATE_KEY_ENCRYPTED,
                addedAt: domainAdded().metadata.occurredAt,
              },
              metadata: occurred(),
            },
          ]);
      });

      it('verifies it when the record comes back split into character-strings', () => {
        given(history())
          .when(verifyDomain([['sendline-verification=', TOKEN]]))
          .then([
            {
              type: 'DomainVerified',
              data: { ...domainKeys, addedAt: domainAdded().metadata.occurredAt },
              metadata: occurred(),
            },
          ]);
      });

      it('refuses when no TXT record was found, saying where it looked', () => {
        given(history())
          .when(verifyDomain([]))
          .thenThrows(
            'DomainVerificationFailed',
            withDetails({ domain: DOMAIN, recordName: `_sendline.${DOMAIN}`, found: [] }),
          );
      });

      it('refuses when the records found do not match, reporting what was found', () => {
        const found = ['sendline-verification=someOtherToken123', `${expectedRecord} `];
        given(history())
          .when(verifyDomain(found))
          .thenThrows('DomainVerificationFailed', withDetails({ domain: DOMAIN, found }));
      });

      it('removes it', () => {
        given(history())
          .when(removeDomain('ACME.example'))
          .then([{ type: 'DomainRemoved', data: { domain: DOMAIN }, metadata: occurred() }]);
      });
    });

    describe('when a domain is verified', () => {
      const history = () => [...anOrganization(), domainAdded(), domainVerified()];

      it('decides nothing when asked to verify it again, whatever the records', () => {
        given(history()).when(verifyDomain([])).thenNothingHappened();
      });

      it('removes it', () => {
        given(history())
          .when(removeDomain())
          .then([{ type: 'DomainRemoved', data: { domain: DOMAIN }, metadata: occurred() }]);
      });
    });

    describe('when a domain was removed', () => {
      const history = () => [...anOrganization(), domainAdded(), domainVerified(), domainRemoved()];

      it('adds it again, unverified, with a new return path', () => {
        given(history())
          .when(addDomain())
          .then([{ type: 'DomainAdded', data: { ...domainKeys, returnPath: newReturnPath }, metadata: occurred() }]);
      });

      it('refuses to verify it', () => {
        given(history())
          .when(verifyDomain([expectedRecord]))
          .thenThrows('DomainNotFound');
      });
    });
  });

  describe('return paths', () => {
    const problems = (error: { details?: Record<string, unknown> }) =>
      error.details?.problems as { record: string; message: string }[];

    describe('when a domain was added before return paths existed', () => {
      const history = () => [...anOrganization(), domainAdded(), domainVerified()];

      it('gives it a return path by an event that repeats the whole domain, its verification kept', () => {
        given(history())
          .when(assignReturnPath('Bounces'))
          .then([
            {
              type: 'DomainReturnPathAssigned',
              data: {
                ...domainKeys,
                addedAt: DOMAIN_ADDED_AT,
                verifiedAt: DOMAIN_VERIFIED_AT,
                returnPath: newReturnPath,
              },
              metadata: occurred(),
            },
          ]);
      });

      it('gives one to an unverified domain too, which stays unverified', () => {
        given([...anOrganization(), domainAdded()])
          .when(assignReturnPath())
          .then([
            {
              type: 'DomainReturnPathAssigned',
              data: { ...domainKeys, addedAt: DOMAIN_ADDED_AT, verifiedAt: null, returnPath: newReturnPath },
              metadata: occurred(),
            },
          ]);
      });

      it('refuses to verify a return path it does not have yet', () => {
        given(history())
          .when(verifyReturnPath())
          .thenThrows('ReturnPathNotAssigned', withDetails({ domain: DOMAIN }));
      });

      it('refuses a return path for a domain the organization does not have', () => {
        given(history())
          .when(assignReturnPath('bounces', 'other.example'))
          .thenThrows('DomainNotFound', withDetails({ domain: 'other.example' }));
      });
    });

    describe('when a domain has a return path not verified yet', () => {
      const history = () => [...anOrganization(), domainAdded(), domainVerified(), returnPathAssigned()];
      const assigned = returnPathAssigned().data;

      it('decides nothing when the same return path is assigned again', () => {
        given(history()).when(assignReturnPath()).thenNothingHappened();
      });

      it('keeps its return path when another label is asked for: refused, nothing moves silently', () => {
        given(history())
          .when(assignReturnPath('mail-back'))
          .thenThrows(
            'ReturnPathAlreadyAssigned',
            withDetails({ domain: DOMAIN, host: RETURN_PATH_HOST, requested: `mail-back.${DOMAIN}` }),
          );
      });

      it('verifies it when its MX points to the mail host and its SPF record includes the SPF domain', () => {
        given(history())
          .when(verifyReturnPath())
          .then([
            {
              type: 'DomainReturnPathVerified',
              data: { ...assigned, returnPath: { ...assigned.returnPath, verifiedAt: LATER } },
              metadata: occurred(),
            },
          ]);
      });

      it('reads an MX host with a trailing dot in any case, and an SPF record in character-strings with its own all', () => {
        given(history())
          .when(
            verifyReturnPath({
              mxRecords: [{ exchange: 'MAIL.Sendline.Example.', priority: 20 }],
              txtRecords: ['some-other=txt', ['v=spf1 include:spf.sendline.example', ' ~all']],
            }),
          )
          .then([
            {
              type: 'DomainReturnPathVerified',
              data: { ...assigned, returnPath: { ...assigned.returnPath, verifiedAt: LATER } },
              metadata: occurred(),
            },
          ]);
      });

      it('refuses when nothing was found, naming both records and what to publish', () => {
        given(history())
          .when(verifyReturnPath({ mxRecords: [], txtRecords: [] }))
          .thenThrows('ReturnPathVerificationFailed', (error) => {
            expect(error.details).toMatchObject({ domain: DOMAIN, host: RETURN_PATH_HOST });
            expect(problems(error)).toEqual([
              {
                record: 'MX',
                message: `no MX record found at ${RETURN_PATH_HOST}; publish MX ${RETURN_PATH_HOST} 10 mail.sendline.example`,
              },
              {
                record: 'SPF',
                message:
                  `no SPF record (TXT "v=spf1 …") found at ${RETURN_PATH_HOST}; ` +
                  `publish TXT ${RETURN_PATH_HOST} "v=spf1 include:spf.sendline.example -all"`,
              },
            ]);
            expect(error.message).toContain(`return path ${RETURN_PATH_HOST} not verified: no MX record found`);
          });
      });

      it('refuses an MX that points to another host, naming it', () => {
        given(history())
          .when(verifyReturnPath({ mxRecords: [{ exchange: 'mx.elsewhere.example', priority: 10 }] }))
          .thenThrows('ReturnPathVerificationFailed', (error) =>
            expect(problems(error)).toEqual([
              {
                record: 'MX',
                message: `the MX of ${RETURN_PATH_HOST} is mx.elsewhere.example, not mail.sendline.example; publish MX ${RETURN_PATH_HOST} 10 mail.sendline.example`,
              },
            ]),
          );
      });

      it('refuses an MX to another host beside the mail host: it would take bounces', () => {
        given(history())
          .when(
            verifyReturnPath({
              mxRecords: [...RETURN_PATH_MX, { exchange: 'mx.elsewhere.example', priority: 5 }],
            }),
          )
          .thenThrows('ReturnPathVerificationFailed', (error) =>
            expect(problems(error)).toEqual([expect.objectContaining({ record: 'MX' })]),
          );
      });

      it('refuses an SPF record that does not include the SPF domain, quoting it', () => {
        given(history())
          .when(verifyReturnPath({ txtRecords: ['v=spf1 include:mail.sendline.example -all'] }))
          .thenThrows('ReturnPathVerificationFailed', (error) =>
            expect(problems(error)).toEqual([
              {
                record: 'SPF',
                message:
                  `the SPF record at ${RETURN_PATH_HOST} does not include spf.sendline.example: ` +
                  `found "v=spf1 include:mail.sendline.example -all"; publish "v=spf1 include:spf.sendline.example -all"`,
              },
            ]),
          );
      });

      it('refuses two SPF records at the return path', () => {
        given(history())
          .when(verifyReturnPath({ txtRecords: [...RETURN_PATH_SPF, 'v=spf1 -all'] }))
          .thenThrows('ReturnPathVerificationFailed', (error) =>
            expect(problems(error)).toEqual([
              {
                record: 'SPF',
                message: `2 SPF records at ${RETURN_PATH_HOST} (a name may have only one): keep only "v=spf1 include:spf.sendline.example -all"`,
              },
            ]),
          );
      });
    });

    describe('when a domain was added with its return path', () => {
      const history = () => [...anOrganization(), domainAddedWithReturnPath()];
      const added = domainAddedWithReturnPath().data;

      it('verifies its ownership, repeating the return path in DomainVerified', () => {
        given(history())
          .when(verifyDomain([expectedRecord]))
          .then([
            {
              type: 'DomainVerified',
              data: { ...domainKeys, addedAt: DOMAIN_ADDED_AT, returnPath: added.returnPath },
              metadata: occurred(),
            },
          ]);
      });

      it('verifies its return path before its ownership, which stays unverified', () => {
        given(history())
          .when(verifyReturnPath())
          .then([
            {
              type: 'DomainReturnPathVerified',
              data: {
                ...domainKeys,
                addedAt: DOMAIN_ADDED_AT,
                verifiedAt: null,
                returnPath: { ...added.returnPath!, verifiedAt: LATER },
              },
              metadata: occurred(),
            },
          ]);
      });
    });

    describe('when a return path is verified', () => {
      const history = () => [
        ...anOrganization(),
        domainAdded(),
        domainVerified(),
        returnPathAssigned(),
        returnPathVerified(),
      ];

      it('decides nothing when asked to verify it again, whatever the records', () => {
        given(history())
          .when(verifyReturnPath({ mxRecords: [], txtRecords: [] }))
          .thenNothingHappened();
      });

      it('decides nothing when the same return path is assigned again', () => {
        given(history()).when(assignReturnPath()).thenNothingHappened();
      });
    });
  });

  describe('API keys', () => {
    describe('when the organization has no key', () => {
      it('issues a key with its scopes, mode, hash and display prefix', () => {
        given(anOrganization())
          .when(issueApiKey({ name: ' production sender ' }))
          .then([{ type: 'ApiKeyIssued', data: { ...apiKeyData }, metadata: occurred() }]);
      });

      it('issues a test key', () => {
        given(anOrganization())
          .when(issueApiKey({ mode: 'test', keyPrefix: 'sl_test_Zz9_', scopes: ['domains:read'] }))
          .then([
            {
              type: 'ApiKeyIssued',
              data: { ...apiKeyData, mode: 'test', keyPrefix: 'sl_test_Zz9_', scopes: ['domains:read'] },
              metadata: occurred(),
            },
          ]);
      });

      it('refuses an unknown scope', () => {
        given(anOrganization())
          .when(issueApiKey({ scopes: ['email:send', 'email:delete'] }))
          .thenThrows('UnknownScope', withDetails({ scope: 'email:delete' }));
      });

      it('refuses a scope given twice', () => {
        given(anOrganization())
          .when(issueApiKey({ scopes: ['email:send', 'email:send'] }))
          .thenThrows('DuplicateScope', withDetails({ scope: 'email:send' }));
      });

      it('refuses a key without scopes', () => {
        given(anOrganization())
          .when(issueApiKey({ scopes: [] }))
          .thenThrows('NoScopes');
      });

      it('refuses an unknown mode', () => {
        given(anOrganization())
          .when(issueApiKey({ mode: 'prod' }))
          .thenThrows('InvalidApiKeyMode');
      });

      it('refuses an empty name', () => {
        given(anOrganization())
          .when(issueApiKey({ name: '' }))
          .thenThrows('InvalidApiKeyName');
      });

      it('refuses a name longer than 100 characters', () => {
        given(anOrganization())
          .when(issueApiKey({ name: 'k'.repeat(101) }))
          .thenThrows('InvalidApiKeyName');
      });

      it('accepts a name of exactly 100 characters', () => {
        given(anOrganization())
          .when(issueApiKey({ name: 'k'.repeat(100) }))
          .then([{ type: 'ApiKeyIssued', data: { ...apiKeyData, name: 'k'.repeat(100) }, metadata: occurred() }]);
      });

      it('refuses a key hash that is not SHA-256 hex', () => {
        given(anOrganization())
          .when(issueApiKey({ keyHash: 'sl_live_' + 'a'.repeat(40) }))
          .thenThrows('InvalidKeyHash');
      });

      it('refuses a display prefix of the other mode', () => {
        given(anOrganization())
          .when(issueApiKey({ keyPrefix: 'sl_test_Ab12' }))
          .thenThrows('InvalidKeyPrefix');
      });

      it('refuses a display prefix longer than 12 characters (more of the secret)', () => {
        given(anOrganization())
          .when(issueApiKey({ keyPrefix: 'sl_live_Ab12cd' }))
          .thenThrows('InvalidKeyPrefix');
      });

      it('refuses to revoke a key it does not have', () => {
        given(anOrganization())
          .when(revokeApiKey())
          .thenThrows('ApiKeyNotFound', withDetails({ keyId: KEY_ID }));
      });
    });

    describe('when a key was issued', () => {
      const history = () => [...anOrganization(), apiKeyIssued()];

      it('refuses another key with the same id', () => {
        given(history())
          .when(issueApiKey({ keyHash: 'b'.repeat(64) }))
          .thenThrows('ApiKeyAlreadyExists', withDetails({ keyId: KEY_ID }));
      });

      it('refuses another key with the same token hash', () => {
        given(history())
          .when(issueApiKey({ keyId: 'another-key' }))
          .thenThrows('DuplicateKeyHash');
      });

      it('revokes it, repeating the whole key', () => {
        given(history())
          .when(revokeApiKey())
          .then([
            {
              type: 'ApiKeyRevoked',
              data: { ...apiKeyData, issuedAt: apiKeyIssued().metadata.occurredAt },
              metadata: occurred(),
            },
          ]);
      });
    });

    describe('when a key was revoked', () => {
      it('refuses to revoke it again', () => {
        given([...anOrganization(), apiKeyIssued(), apiKeyRevoked()])
          .when(revokeApiKey())
          .thenThrows('ApiKeyAlreadyRevoked', withDetails({ keyId: KEY_ID }));
      });
    });
  });

  describe('when an allowance is set', () => {
    const history = () => [...anOrganization(), allowanceSet(5_000)];

    it('decides nothing when it is set to the same value', () => {
      given(history()).when(setAllowance(5_000)).thenNothingHappened();
    });

    it('sets it to unlimited', () => {
      given(history())
        .when(setAllowance(null))
        .then([{ type: 'AllowanceSet', data: { messagesPerMonth: null }, metadata: occurred() }]);
    });
  });
});
