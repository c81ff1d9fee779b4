import type { ServerSettingsSummary } from '@sendline/application';
import type { StoredApiKey } from '@sendline/infra';
import { Type, type Static } from 'typebox';
import { requireKey } from '../auth';
import type { Api, ApiDependencies } from '../context';
import { ApiError } from '../errors';
import { errorResponses } from '../openapi';
import { Count, Offset } from './activity';

/**
 * Postmark's server settings (`/server`) and inbound rules (`/triggers/inboundRules`), field for field, so the
 * `postmark` client's getServer / editServer and inbound rule trigger methods work unchanged. An organization is
 * the server: the fields with a meaning here are the inbound ones (InboundAddress, InboundHash, InboundHookUrl,
 * InboundDomain, InboundSpamThreshold, RawEmailEnabled) and Name; the others are answered with fixed values and
 * ignored in a PUT (docs/inbound.md lists them). Ours: InboundHookSigningSecret, the secret the inbound hook's
 * calls are signed with (Webhook-Signature, as the webhooks'), InboundDomainVerified and InboundDomainDnsRecords, and
 * `PUT /server/verifyInboundDomain`, which looks the InboundDomain's MX up (Postmark checks it in its console).
 */

const ServerAnswer = Type.Object({
  ID: Type.Integer({ description: 'A number derived from the inbound hash (an organization is the server)' }),
  Name: Type.String(),
  ApiTokens: Type.Array(Type.String(), { description: 'Always empty: tokens are never stored' }),
  ServerLink: Type.String(),
  Color: Type.String(),
  SmtpApiActivated: Type.Boolean(),
  RawEmailEnabled: Type.Boolean({ description: 'RawEmail (the whole message) is in the JSON posted' }),
  DeliveryType: Type.String(),
  InboundAddress: Type.String({
    description: '{InboundHash}@{the service inbound domain}; +anything gives MailboxHash',
  }),
  InboundHookUrl: Type.String(),
  BounceHookUrl: Type.String({ description: 'Always empty: /webhooks holds them' }),
  OpenHookUrl: Type.String(),
  DeliveryHookUrl: Type.String(),
  ClickHookUrl: Type.String(),
  PostFirstOpenOnly: Type.Boolean(),
  InboundDomain: Type.String({
    description: 'The organization’s own inbound domain: mail to any address there is its inbound mail once verified',
  }),
  InboundDomainVerified: Type.Boolean({
    description:
      'Ours: the MX of InboundDomain was found (PUT /server/verifyInboundDomain); mail to it is taken only then',
  }),
  InboundDomainDnsRecords: Type.Array(
    Type.Object({ Type: Type.String(), Name: Type.String(), Value: Type.String(), Priority: Type.Integer() }),
    {
      description: 'Ours: the record to publish for InboundDomain (MX 10 to the service mail host); empty without one',
    },
  ),
  InboundHash: Type.String(),
  InboundSpamThreshold: Type.Integer({ description: 'Stored and shown; no spam score is computed yet' }),
  TrackOpens: Type.Boolean(),
  TrackLinks: Type.String(),
  IncludeBounceContentInHook: Type.Boolean(),
  EnableSmtpApiErrorHooks: Type.Boolean(),
  InboundHookSigningSecret: Type.String({ description: "Ours: the inbound hook's signing secret (Standard Webhooks)" }),
});

const EditRequest = Type.Object(
  {
    Name: Type.Optional(Type.String({ description: 'Ignored: the organization name is changed in the console' })),
    InboundHookUrl: Type.Optional(
      Type.Union([Type.String({ maxLength: 2048 }), Type.Null()], { description: 'Empty or null: nowhere' }),
    ),
    InboundDomain: Type.Optional(Type.Union([Type.String({ maxLength: 253 }), Type.Null()])),
    InboundSpamThreshold: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
    RawEmailEnabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true, description: 'The fields to change; others are accepted and ignored' },
);

const RuleAnswer = Type.Object({ ID: Type.Integer(), Rule: Type.String() });
const RuleRequest = Type.Object({ Rule: Type.String({ description: 'An email address or a domain to block' }) });
const ListQuery = Type.Object(
  {
    count: Type.Optional(Count),
    offset: Type.Optional(Offset),
  },
  { additionalProperties: true },
);

function keyActor(key: StoredApiKey): string {
  return `api key ${key.prefix}`;
}

/** The records to publish for the own inbound domain, in Postmark's words (the console shows the same). */
export function inboundDomainRecordsOf(settings: ServerSettingsSummary) {
  return settings.inboundDomainRecords.map((record) => ({
    Type: record.type,
    Name: record.name,
    Value: record.value,
    Priority: record.priority ?? 0,
  }));
}

function toAnswer(settings: ServerSettingsSummary): Static<typeof ServerAnswer> {
  return {
    ID: parseInt(settings.inboundHash.slice(0, 7), 16),
    Name: settings.name,
    ApiTokens: [],
    ServerLink: '',
    Color: 'Blue',
    SmtpApiActivated: false,
    RawEmailEnabled: settings.rawEmailEnabled,
    DeliveryType: 'Live',
    InboundAddress: settings.inboundAddress,
    InboundHookUrl: settings.inboundHookUrl,
    BounceHookUrl: '',
    OpenHookUrl: '',
    DeliveryHookUrl: '',
    ClickHookUrl: '',
    PostFirstOpenOnly: false,
    InboundDomain: settings.inboundDomain,
    InboundDomainVerified: settings.inboundDomainVerified,
    InboundDomainDnsRecords: inboundDomainRecordsOf(settings),
    InboundHash: settings.inboundHash,
    InboundSpamThreshold: settings.inboundSpamThreshold,
    TrackOpens: false,
    TrackLinks: 'None',
    IncludeBounceContentInHook: false,
    EnableSmtpApiErrorHooks: false,
    InboundHookSigningSecret: settings.inboundHookSigningSecret,
  };
}

/** A schema error as Postmark's 403 naming the field. */
function refuseInvalidBody(error: { validation?: { instancePath?: string; message?: string }[] } | undefined) {
  if (!error) return;
  const first = error.validation?.[0];
  const path = first?.instancePath ? first.instancePath.slice(1).replace(/\//g, '.') : '';
  throw new ApiError('IncompatibleJson', {
    detail: `Invalid request: ${path ? `'${path}' ` : ''}${first?.message ?? 'is invalid'}.`,
  });
}

function ruleId(id: string): number {
  const value = /^[1-9][0-9]{0,15}$/.test(id) ? Number(id) : NaN;
  if (!Number.isSafeInteger(value)) throw new ApiError('InboundRuleNotFound', { ruleId: id });
  return value;
}

const ERRORS_422 =
  'ErrorCode 403: the body does not fit the schema; 402: malformed JSON; 1403: an invalid InboundHookUrl; ' +
  '1402: the InboundHookUrl leads to a non-public address; 1601: an invalid InboundDomain; 1602: an invalid InboundSpamThreshold; ' +
  "1603: the InboundDomain is another organization's";

export function serverRoutes(deps: ApiDependencies) {
  const service = deps.inbound;
  return async function (app: Api): Promise<void> {
    app.get(
      '/server',
      {
        config: { scope: 'webhooks:manage' },
        schema: {
          tags: ['inbound'],
          summary: "The organization's server settings: its inbound address and hook",
          response: { 200: ServerAnswer, ...errorResponses([401, 403, 503]) },
        },
      },
      async (request) => {
        const key = requireKey(request);
        return toAnswer(await service.get(key.organizationId));
      },
    );

    app.put(
      '/server',
      {
        config: { scope: 'webhooks:manage' },
        attachValidation: true,
        schema: {
          tags: ['inbound'],
          summary: 'Change the inbound settings given; the others keep their values',
          body: EditRequest,
          response: { 200: ServerAnswer, ...errorResponses([401, 403, 413, 415, 422, 503], { 422: ERRORS_422 }) },
        },
      },
      async (request) => {
        refuseInvalidBody(request.validationError);
        const key = requireKey(request);
        const body = request.body;
        const settings = await service.as(keyActor(key)).update(key.organizationId, {
          ...(body.InboundHookUrl !== undefined && { inboundHookUrl: body.InboundHookUrl }),
          ...(body.InboundDomain !== undefined && { inboundDomain: body.InboundDomain }),
          ...(body.InboundSpamThreshold !== undefined && { inboundSpamThreshold: body.InboundSpamThreshold }),
          ...(body.RawEmailEnabled !== undefined && { rawEmailEnabled: body.RawEmailEnabled }),
        });
        return toAnswer(settings);
      },
    );

    app.put(
      '/server/verifyInboundDomain',
      {
        config: { scope: 'webhooks:manage' },
        schema: {
          tags: ['inbound'],
          summary: 'Look up the InboundDomain’s MX and record it verified when it points to the service mail host',
          response: {
            200: ServerAnswer,
            ...errorResponses([401, 403, 422, 503], {
              422:
                'ErrorCode 1604: no InboundDomain; 1605: its MX was not found pointing to the mail host (the message ' +
                "names the record to publish); 1603: the domain is another organization's",
            }),
          },
        },
      },
      async (request) => {
        const key = requireKey(request);
        return toAnswer(await service.as(keyActor(key)).verifyDomain(key.organizationId));
      },
    );

    app.get(
      '/triggers/inboundRules',
      {
        config: { scope: 'webhooks:manage' },
        schema: {
          tags: ['inbound'],
          summary: 'The inbound rules: senders and domains whose mail is blocked',
          querystring: ListQuery,
          response: {
            200: Type.Object({ TotalCount: Type.Integer(), InboundRules: Type.Array(RuleAnswer) }),
            ...errorResponses([401, 403, 422, 503], { 422: 'ErrorCode 403: count or offset is not a number' }),
          },
        },
        attachValidation: true,
      },
      async (request) => {
        refuseInvalidBody(request.validationError);
        const key = requireKey(request);
        const rules = await service.rules(key.organizationId);
        const offset = request.query.offset === undefined ? 0 : Number(request.query.offset);
        const count = request.query.count === undefined ? 500 : Number(request.query.count);
        return {
          TotalCount: rules.length,
          InboundRules: rules.slice(offset, offset + count).map((rule) => ({ ID: rule.ruleId, Rule: rule.rule })),
        };
      },
    );

    app.post(
      '/triggers/inboundRules',
      {
        config: { scope: 'webhooks:manage' },
        attachValidation: true,
        schema: {
          tags: ['inbound'],
          summary: 'Block the mail of an address or a domain',
          body: RuleRequest,
          response: {
            200: RuleAnswer,
            ...errorResponses([401, 403, 413, 415, 422, 503], {
              422: 'ErrorCode 403: no Rule; 1610: not an address or a domain; 1611: the rule exists; 1613: too many rules',
            }),
          },
        },
      },
      async (request) => {
        refuseInvalidBody(request.validationError);
        const key = requireKey(request);
        const rule = await service.as(keyActor(key)).createRule(key.organizationId, request.body.Rule);
        return { ID: rule.ruleId, Rule: rule.rule };
      },
    );

    app.delete(
      '/triggers/inboundRules/:id',
      {
        config: { scope: 'webhooks:manage' },
        schema: {
          tags: ['inbound'],
          summary: 'Remove an inbound rule',
          params: Type.Object({ id: Type.String() }),
          response: {
            200: Type.Object({ ErrorCode: Type.Integer(), Message: Type.String() }),
            ...errorResponses([401, 403, 404, 503], { 404: 'ErrorCode 1612: no such rule in this organization' }),
          },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const id = ruleId(request.params.id);
        await service.as(keyActor(key)).deleteRule(key.organizationId, id);
        return { ErrorCode: 0, Message: `Rule ${id} removed.` };
      },
    );
  };
}
