import { WebhookDeliveries } from '@sendline/application';
import { INBOUND_HOOK_ID, roleMay } from '@sendline/domain';
import { inboundCallIdOf, WebhookDeliveryLog } from '@sendline/infra';
import { Type } from 'typebox';
import type { Api, ApiDependencies } from '../context';
import { ApiError } from '../errors';
import { inboundDetails, SearchQuery, searchInbound, validId } from '../routes/inbound';
import { inboundDomainRecordsOf } from '../routes/server';
import { memberAllowedTo, memberOf } from './session';

/**
 * The Inbound page (issue 35): the organization's inbound address and hook settings, its inbound messages (the
 * public `/messages/inbound` search and details: same filters, answers and errors), the hook's delivery log for one
 * message, retry and bypass, the inbound rules, and the organization's own inbound domain (its MX record to publish,
 * verified by looking it up). Every role reads; admins and developers change (roles.ts,
 * `manageInbound`, the API's `webhooks:manage`). The hook's signing secret is shown only to those who may change.
 */

const SettingsBody = Type.Object({
  InboundHookUrl: Type.Optional(Type.Union([Type.String({ maxLength: 2048 }), Type.Null()])),
  InboundDomain: Type.Optional(Type.Union([Type.String({ maxLength: 253 }), Type.Null()])),
  RawEmailEnabled: Type.Optional(Type.Boolean()),
});

function ruleIdOf(id: string): number {
  const value = /^[1-9][0-9]{0,15}$/.test(id) ? Number(id) : NaN;
  if (!Number.isSafeInteger(value)) throw new ApiError('InboundRuleNotFound', { ruleId: id });
  return value;
}

export function inboundPage(deps: ApiDependencies) {
  const service = deps.inbound;
  const deliveries = new WebhookDeliveries({
    log: new WebhookDeliveryLog(deps.redis),
    store: deps.store,
    now: () => deps.now(),
  });

  const settingsOf = async (organizationId: string, showSecret: boolean) => {
    const settings = await service.get(organizationId);
    return {
      InboundAddress: settings.inboundAddress,
      InboundHookUrl: settings.inboundHookUrl,
      RawEmailEnabled: settings.rawEmailEnabled,
      InboundDomain: settings.inboundDomain,
      InboundDomainVerified: settings.inboundDomainVerified,
      // The records to publish for it, as PUT /server answers them (its MX to the service's mail host).
      InboundDomainDnsRecords: inboundDomainRecordsOf(settings),
      InboundSpamThreshold: settings.inboundSpamThreshold,
      InboundHookSigningSecret: showSecret ? settings.inboundHookSigningSecret : null,
    };
  };

  return async function (api: Api): Promise<void> {
    api.get('/inbound/server', async (request) => {
      const member = memberOf(request);
      return settingsOf(member.organization.id, roleMay(member.role, 'manageInbound'));
    });

    api.put('/inbound/server', { schema: { body: SettingsBody } }, async (request) => {
      const member = memberAllowedTo(request, 'manageInbound', 'change the inbound settings');
      const body = request.body;
      await service.as(member.email).update(member.organization.id, {
        ...(body.InboundHookUrl !== undefined && { inboundHookUrl: body.InboundHookUrl }),
        ...(body.RawEmailEnabled !== undefined && { rawEmailEnabled: body.RawEmailEnabled }),
        ...(body.InboundDomain !== undefined && { inboundDomain: body.InboundDomain }),
      });
      return settingsOf(member.organization.id, true);
    });

    // The own inbound domain's MX looked up now (PUT /server/verifyInboundDomain of the API, the same refusals).
    api.put('/inbound/server/verify-domain', async (request) => {
      const member = memberAllowedTo(request, 'manageInbound', 'verify the inbound domain');
      await service.as(member.email).verifyDomain(member.organization.id);
      return settingsOf(member.organization.id, true);
    });

    api.get('/inbound/messages', { schema: { querystring: SearchQuery } }, async (request) =>
      searchInbound(deps, memberOf(request).organization.id, request.query),
    );

    api.get('/inbound/messages/:id', { schema: { params: Type.Object({ id: Type.String() }) } }, async (request) => {
      const organizationId = memberOf(request).organization.id;
      const message = await inboundDetails(deps, organizationId, request.params.id);
      // The hook's calls for this message: the first posting, and the one after a bypass. The log keeps the
      // inbound hook's last 100 attempts (as a webhook's).
      const id = validId(request.params.id);
      const calls = new Set([inboundCallIdOf(id, false), inboundCallIdOf(id, true)]);
      const attempts = await deliveries.attempts(organizationId, INBOUND_HOOK_ID);
      return {
        message,
        deliveries: attempts
          .filter((attempt) => calls.has(attempt.callId))
          .map((attempt) => ({
            DeliveryID: attempt.callId,
            Attempt: attempt.attempt,
            Manual: attempt.manual,
            Status: attempt.status,
            HttpStatus: attempt.httpStatus ?? null,
            LatencyMs: attempt.latencyMs,
            Response: attempt.answer,
            Error: attempt.error ?? null,
            AttemptedAt: new Date(attempt.at).toISOString(),
            NextAttemptAt: attempt.nextAttemptAt === undefined ? null : new Date(attempt.nextAttemptAt).toISOString(),
          })),
      };
    });

    api.put(
      '/inbound/messages/:id/retry',
      { schema: { params: Type.Object({ id: Type.String() }) } },
      async (request) => {
        const member = memberAllowedTo(request, 'manageInbound', 'retry inbound messages');
        const id = validId(request.params.id);
        await deps.inboundMessages.retry(member.organization.id, id);
        return { ErrorCode: 0, Message: `Inbound message ${id} is being posted again.` };
      },
    );

    api.put(
      '/inbound/messages/:id/bypass',
      { schema: { params: Type.Object({ id: Type.String() }) } },
      async (request) => {
        const member = memberAllowedTo(request, 'manageInbound', 'let blocked inbound messages through');
        const id = validId(request.params.id);
        await deps.inboundMessages.bypass(member.organization.id, id);
        return { ErrorCode: 0, Message: `Inbound message ${id} is let through and posted now.` };
      },
    );

    api.get('/inbound/rules', async (request) => {
      const rules = await service.rules(memberOf(request).organization.id);
      return { TotalCount: rules.length, InboundRules: rules.map((rule) => ({ ID: rule.ruleId, Rule: rule.rule })) };
    });

    api.post(
      '/inbound/rules',
      { schema: { body: Type.Object({ Rule: Type.String({ maxLength: 320 }) }) } },
      async (request) => {
        const member = memberAllowedTo(request, 'manageInbound', 'add inbound rules');
        const rule = await service.as(member.email).createRule(member.organization.id, request.body.Rule);
        return { ID: rule.ruleId, Rule: rule.rule };
      },
    );

    api.delete('/inbound/rules/:id', { schema: { params: Type.Object({ id: Type.String() }) } }, async (request) => {
      const member = memberAllowedTo(request, 'manageInbound', 'remove inbound rules');
      const id = ruleIdOf(request.params.id);
      await service.as(member.email).deleteRule(member.organization.id, id);
      return { ErrorCode: 0, Message: `Rule ${id} removed.` };
    });
  };
}
