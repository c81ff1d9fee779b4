import { describe, expect, it } from 'vitest';
import {
  accountEventKey,
  foldOrganization,
  noWebhookTriggers,
  organizationDecider,
  webhookConfig,
  type CreateWebhook,
  type DeleteWebhook,
  type DisableWebhook,
  type WebhookDisabled,
  type UpdateWebhook,
  type WebhookCreated,
  type WebhookDeleted,
  type WebhookUpdated,
} from '../../src/accounts';
import { DeciderSpecification } from '../decider-spec';
import { ADMIN, CREATED_AT, LATER, ORG, anOrganization, command, eventMetadata, memberAdded } from './fixtures';

const { given } = DeciderSpecification.for(organizationDecider);

const SECRET = 'v1.aXY.dGFn.c2VjcmV0';
const PASSWORD = 'v1.aXY.dGFn.cGFzcw';
const HOOK_CREATED_AT = CREATED_AT + 60_000;

const createWebhook = (data: Partial<CreateWebhook['data']> = {}) =>
  command<CreateWebhook>('CreateWebhook', {
    webhookId: 1234567,
    url: 'https://hooks.acme.example/postmark',
    signingSecretSealed: SECRET,
    allowHttp: false,
    ...data,
  });
const updateWebhook = (data: Partial<UpdateWebhook['data']> = {}) =>
  command<UpdateWebhook>('UpdateWebhook', { webhookId: 1234567, allowHttp: false, ...data });
const deleteWebhook = (webhookId = 1234567) => command<DeleteWebhook>('DeleteWebhook', { webhookId });

const webhookData = (data: Partial<WebhookCreated['data']> = {}): WebhookCreated['data'] => ({
  webhookId: 1234567,
  url: 'https://hooks.acme.example/postmark',
  messageStream: 'outbound',
  httpAuth: null,
  httpHeaders: [],
  triggers: noWebhookTriggers(),
  signingSecretSealed: SECRET,
  ...data,
});

function webhookCreated(data: Partial<WebhookCreated['data']> = {}): WebhookCreated {
  const full = webhookData(data);
  return {
    type: 'WebhookCreated',
    data: full,
    metadata: eventMetadata(`ev-webhook-${full.webhookId}`, HOOK_CREATED_AT),
  };
}

const withDelivery = { ...noWebhookTriggers(), delivery: { enabled: true } };

describe('webhooks of an organization', () => {
  describe('creating one', () => {
    it('records the webhook with its stream, triggers (absent ones off) and sealed secrets', () => {
      given(anOrganization())
        .when(
          createWebhook({
            httpAuth: { username: 'acme', passwordSealed: PASSWORD },
            httpHeaders: [{ name: 'X-Acme', value: 'yes' }],
            triggers: { delivery: { enabled: true }, bounce: { enabled: true, includeContent: true } },
          }),
        )
        .then([
          {
            type: 'WebhookCreated',
            data: webhookData({
              httpAuth: { username: 'acme', passwordSealed: PASSWORD },
              httpHeaders: [{ name: 'X-Acme', value: 'yes' }],
              triggers: { ...withDelivery, bounce: { enabled: true, includeContent: true } },
            }),
            metadata: eventMetadata('event-1', LATER),
          },
        ]);
    });

    it('accepts the triggers nothing produces yet (Open, Click) and SpamComplaint, and keeps them', () => {
      const [created] = organizationDecider.decide(
        createWebhook({
          triggers: {
            open: { enabled: true, postFirstOpenOnly: true },
            click: { enabled: true },
            spamComplaint: { enabled: true },
          },
        }),
        foldOrganization(anOrganization()),
      );
      expect(created?.type === 'WebhookCreated' && created.data.triggers).toMatchObject({
        open: { enabled: true, postFirstOpenOnly: true },
        click: { enabled: true },
        spamComplaint: { enabled: true, includeContent: false },
      });
    });

    it('refuses plain http in production', () => {
      given(anOrganization())
        .when(createWebhook({ url: 'http://hooks.acme.example/' }))
        .thenThrows('InvalidWebhookUrl', (error) => expect(error.message).toMatch(/https/));
    });

    it('accepts plain http when the caller runs in development', () => {
      const [created] = organizationDecider.decide(
        createWebhook({ url: 'http://localhost:8080/hook', allowHttp: true }),
        foldOrganization(anOrganization()),
      );
      expect(created?.type).toBe('WebhookCreated');
    });

    it.each([
      ['a relative URL', '/hook'],
      ['another scheme', 'ftp://hooks.acme.example/'],
      ['credentials in the URL', 'https://user:pass@hooks.acme.example/'],
      ['a fragment', 'https://hooks.acme.example/#x'],
      ['spaces', 'https://hooks.acme.example/a b'],
      ['an empty URL', ''],
      ['a URL over 2048 characters', `https://hooks.acme.example/${'a'.repeat(2048)}`],
    ])('refuses %s', (_name, url) => {
      given(anOrganization()).when(createWebhook({ url })).thenThrows('InvalidWebhookUrl');
    });

    it('refuses a message stream other than outbound', () => {
      given(anOrganization())
        .when(createWebhook({ messageStream: 'broadcast' }))
        .thenThrows('InvalidMessageStream');
    });

    it.each([
      ['a line break in a value', [{ name: 'X-A', value: 'a\r\nInjected: 1' }]],
      ['a name that is not a token', [{ name: 'X A', value: 'a' }]],
      ['a header the service sets itself', [{ name: 'Webhook-Signature', value: 'v1,forged' }]],
      [
        'the same name twice',
        [
          { name: 'X-A', value: '1' },
          { name: 'x-a', value: '2' },
        ],
      ],
      ['more than 20 headers', Array.from({ length: 21 }, (_, i) => ({ name: `X-${i}`, value: 'v' }))],
    ])('refuses HttpHeaders with %s', (_name, httpHeaders) => {
      given(anOrganization()).when(createWebhook({ httpHeaders })).thenThrows('InvalidWebhookHeaders');
    });

    it('refuses an Authorization header beside HttpAuth', () => {
      given(anOrganization())
        .when(
          createWebhook({
            httpAuth: { username: 'acme', passwordSealed: PASSWORD },
            httpHeaders: [{ name: 'Authorization', value: 'Bearer x' }],
          }),
        )
        .thenThrows('InvalidWebhookHeaders');
    });

    it("refuses a username with ':' (it could not be sent in HTTP Basic)", () => {
      given(anOrganization())
        .when(createWebhook({ httpAuth: { username: 'a:b', passwordSealed: PASSWORD } }))
        .thenThrows('InvalidWebhookHttpAuth');
    });

    it.each([
      ['an unknown trigger', { Delivery: { enabled: true } }],
      ['an unknown field', { bounce: { enabled: true, includeBody: true } }],
      ['a field that is not a boolean', { delivery: { enabled: 'yes' } }],
    ])('refuses Triggers with %s', (_name, triggers) => {
      given(anOrganization())
        .when(createWebhook({ triggers: triggers as CreateWebhook['data']['triggers'] }))
        .thenThrows('InvalidWebhookTriggers');
    });

    it('refuses an eleventh webhook on the stream', () => {
      const ten = Array.from({ length: 10 }, (_, i) => webhookCreated({ webhookId: i + 1 }));
      given([...anOrganization(), ...ten])
        .when(createWebhook({ webhookId: 99 }))
        .thenThrows('TooManyWebhooks');
    });

    it('accepts a new webhook again once one of ten is deleted', () => {
      const ten = Array.from({ length: 10 }, (_, i) => webhookCreated({ webhookId: i + 1 }));
      const deleted: WebhookDeleted = {
        type: 'WebhookDeleted',
        data: { webhookId: 3 },
        metadata: eventMetadata('ev-deleted', LATER),
      };
      const events = organizationDecider.decide(
        createWebhook({ webhookId: 99 }),
        foldOrganization([...anOrganization(), ...ten, deleted]),
      );
      expect(events.map((e) => e.type)).toEqual(['WebhookCreated']);
    });

    it('refuses an id the organization already uses (the caller draws another)', () => {
      given([...anOrganization(), webhookCreated()])
        .when(createWebhook())
        .thenThrows('WebhookAlreadyExists');
    });

    it.each([0, -1, 1.5, 2 ** 31])('refuses the id %s', (webhookId) => {
      given(anOrganization()).when(createWebhook({ webhookId })).thenThrows('InvalidWebhookId');
    });

    it('refuses a webhook without its sealed signing secret', () => {
      given(anOrganization())
        .when(createWebhook({ signingSecretSealed: '' }))
        .thenThrows('InvalidWebhookSecret');
    });

    it('refuses when the organization does not exist', () => {
      given([]).when(createWebhook()).thenThrows('OrganizationNotFound');
    });
  });

  describe('when a webhook exists', () => {
    const history = () => [
      ...anOrganization(),
      webhookCreated({ httpAuth: { username: 'acme', passwordSealed: PASSWORD }, triggers: withDelivery }),
    ];

    it('updates only the fields given, repeating the whole webhook with its creation time', () => {
      given(history())
        .when(updateWebhook({ url: 'https://hooks.acme.example/v2', triggers: { bounce: { enabled: true } } }))
        .then([
          {
            type: 'WebhookUpdated',
            data: {
              ...webhookData({
                url: 'https://hooks.acme.example/v2',
                httpAuth: { username: 'acme', passwordSealed: PASSWORD },
                triggers: { ...withDelivery, bounce: { enabled: true, includeContent: false } },
              }),
              createdAt: HOOK_CREATED_AT,
            },
            metadata: eventMetadata('event-1', LATER),
          },
        ]);
    });

    it('keeps the current password when the caller sends back the masked one (passwordSealed null)', () => {
      const [updated] = organizationDecider.decide(
        updateWebhook({ httpAuth: { username: 'acme2', passwordSealed: null } }),
        foldOrganization(history()),
      );
      expect(updated?.type === 'WebhookUpdated' && updated.data.httpAuth).toEqual({
        username: 'acme2',
        passwordSealed: PASSWORD,
      });
    });

    it('drops the credentials when HttpAuth is null', () => {
      const [updated] = organizationDecider.decide(updateWebhook({ httpAuth: null }), foldOrganization(history()));
      expect(updated?.type === 'WebhookUpdated' && updated.data.httpAuth).toBeNull();
    });

    it('decides nothing when the change leaves the webhook as it was', () => {
      given(history())
        .when(updateWebhook({ url: 'https://hooks.acme.example/postmark', triggers: { delivery: { enabled: true } } }))
        .thenNothingHappened();
    });

    it('refuses an update that breaks a rule (http in production)', () => {
      given(history())
        .when(updateWebhook({ url: 'http://hooks.acme.example/' }))
        .thenThrows('InvalidWebhookUrl');
    });

    it('deletes it', () => {
      given(history())
        .when(deleteWebhook())
        .then([{ type: 'WebhookDeleted', data: { webhookId: 1234567 }, metadata: eventMetadata('event-1', LATER) }]);
    });

    it('refuses to update or delete an id the organization does not have: WebhookNotFound', () => {
      given(history())
        .when(updateWebhook({ webhookId: 1 }))
        .thenThrows('WebhookNotFound', (error) => expect(error.details).toEqual({ webhookId: '1' }));
      given(history()).when(deleteWebhook(1)).thenThrows('WebhookNotFound');
    });

    it('refuses a deleted one: WebhookNotFound', () => {
      const deleted: WebhookDeleted = {
        type: 'WebhookDeleted',
        data: { webhookId: 1234567 },
        metadata: eventMetadata('ev-deleted', LATER),
      };
      given([...history(), deleted])
        .when(deleteWebhook())
        .thenThrows('WebhookNotFound');
    });
  });

  describe('state and keys', () => {
    it('folds an update whose creation was compacted away from the update alone', () => {
      const updated: WebhookUpdated = {
        type: 'WebhookUpdated',
        data: { ...webhookData(), createdAt: HOOK_CREATED_AT },
        metadata: eventMetadata('ev-updated', LATER),
      };
      const state = foldOrganization([...anOrganization(), updated]);
      expect(state.webhooks.get(1234567)).toEqual({ ...webhookData(), createdAt: HOOK_CREATED_AT, updatedAt: LATER });
    });

    it('keys every event of a webhook by organization and id, so compaction keeps its latest state', () => {
      expect(accountEventKey(webhookCreated())).toBe(`webhook/${ORG}/1234567`);
    });

    it('says a webhook with no trigger on is not enabled (kept, never called)', () => {
      const state = { ...webhookData(), createdAt: 1, updatedAt: 1 };
      expect(webhookConfig(ORG, state).enabled).toBe(false);
      expect(webhookConfig(ORG, { ...state, triggers: withDelivery }).enabled).toBe(true);
    });
  });

  describe('disabling one that failed for 24 hours straight', () => {
    const DAY = 24 * 60 * 60 * 1000;
    const history = () => [
      ...anOrganization(),
      memberAdded('bob@acme.example', 'developer'),
      memberAdded('cy@acme.example', 'admin'),
      webhookCreated({ triggers: withDelivery }),
    ];
    const disable = (failingSince: number, now: number, disableAfterMs = DAY) =>
      command<DisableWebhook>(
        'DisableWebhook',
        { webhookId: 1234567, failingSince, reason: 'answered 500', disableAfterMs },
        now,
      );
    const failingSince = HOOK_CREATED_AT + 60_000;
    const disabled = (): WebhookDisabled => ({
      type: 'WebhookDisabled',
      data: {
        ...webhookData({ triggers: withDelivery }),
        createdAt: HOOK_CREATED_AT,
        failingSince,
        reason: 'answered 500',
        notifyAdmins: [ADMIN, 'cy@acme.example'],
      },
      metadata: eventMetadata('event-1', failingSince + DAY),
    });

    it('disables it, repeating the whole webhook, and names the admins (not the other members) to tell', () => {
      given(history())
        .when(disable(failingSince, failingSince + DAY))
        .then([disabled()]);
    });

    it('decides nothing before the streak lasted the limit', () => {
      given(history())
        .when(disable(failingSince, failingSince + DAY - 1))
        .thenNothingHappened();
    });

    it('counts the streak from the webhook’s last save: failures before a change do not count', () => {
      const updated: WebhookUpdated = {
        type: 'WebhookUpdated',
        data: { ...webhookData({ triggers: withDelivery, url: 'https://hooks.acme.example/v2' }), createdAt: 1 },
        metadata: eventMetadata('ev-updated', failingSince + DAY / 2),
      };
      given([...history(), updated])
        .when(disable(failingSince, failingSince + DAY))
        .thenNothingHappened();
      given([...history(), updated])
        .when(disable(failingSince, failingSince + DAY / 2 + DAY))
        .then([
          expect.objectContaining({
            type: 'WebhookDisabled',
            data: expect.objectContaining({ failingSince: failingSince + DAY / 2 }),
          }) as unknown as WebhookDisabled,
        ]);
    });

    it('decides nothing for a webhook disabled already (asked again after a crash, or by another failure)', () => {
      given([...history(), disabled()])
        .when(disable(failingSince, failingSince + 2 * DAY))
        .thenNothingHappened();
    });

    it('refuses a webhook the organization does not have', () => {
      given(anOrganization())
        .when(disable(failingSince, failingSince + DAY))
        .thenThrows('WebhookNotFound');
    });

    it('leaves it disabled, not called, until it is saved again: any PUT, even unchanged, enables it', () => {
      const state = foldOrganization([...history(), disabled()]);
      const webhook = state.webhooks.get(1234567)!;
      expect(webhook.disabled).toEqual({
        at: failingSince + DAY,
        failingSince,
        reason: 'answered 500',
        notifyAdmins: [ADMIN, 'cy@acme.example'],
      });
      expect(webhookConfig(ORG, webhook).enabled).toBe(false);
      given([...history(), disabled()])
        .when(updateWebhook())
        .then([
          {
            type: 'WebhookUpdated',
            data: { ...webhookData({ triggers: withDelivery }), createdAt: HOOK_CREATED_AT },
            metadata: eventMetadata('event-1', LATER),
          },
        ]);
      const enabled = foldOrganization([
        ...history(),
        disabled(),
        {
          type: 'WebhookUpdated',
          data: { ...webhookData({ triggers: withDelivery }), createdAt: HOOK_CREATED_AT },
          metadata: eventMetadata('ev-enabled', LATER),
        } satisfies WebhookUpdated,
      ]).webhooks.get(1234567)!;
      expect(enabled.disabled).toBeUndefined();
      expect(webhookConfig(ORG, enabled).enabled).toBe(true);
    });

    it('is keyed as the webhook’s other events (it replaces them under compaction)', () => {
      expect(accountEventKey(disabled())).toBe(`webhook/${ORG}/1234567`);
    });
  });
});
