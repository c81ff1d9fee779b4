import { WebhookDeliveries } from '@sendline/application';
import { WEBHOOK_DELIVERY_LOG_LENGTH, WebhookDeliveryLog } from '@sendline/infra';
import { Type } from 'typebox';
import { requireKey } from '../auth';
import type { Api, ApiDependencies } from '../context';
import { ApiError } from '../errors';
import { errorResponses } from '../openapi';

/**
 * A webhook's delivery log and manual redelivery (ours, beyond Postmark): the last 100 attempts of the webhook's
 * calls with their status, HTTP status, latency and the start of the answer, newest first; and a call made again
 * on demand. A delivery is named by its call id, the `Webhook-Id` its receiver saw. An organization only ever
 * reaches its own webhooks and calls: another's is answered 404 like one that does not exist.
 */

const IdParams = Type.Object({ id: Type.String({ description: "The webhook's ID" }) });
const RetryParams = Type.Object({
  id: Type.String({ description: "The webhook's ID" }),
  deliveryId: Type.String({ description: 'The call’s id (its Webhook-Id)' }),
});
/** 1 to 100 (leading zeros allowed), as a string: query parameters come as text (the activity route's way). */
const DeliveriesQuery = Type.Object(
  {
    count: Type.Optional(
      Type.String({
        pattern: '^0*([1-9][0-9]?|100)$',
        description: `1 to ${WEBHOOK_DELIVERY_LOG_LENGTH}; default all`,
      }),
    ),
  },
  { additionalProperties: true },
);

const Delivery = Type.Object({
  DeliveryID: Type.String({ description: 'The call’s id, sent as Webhook-Id on each of its attempts' }),
  WebhookID: Type.Integer(),
  RecordType: Type.String({ description: 'Delivery, Bounce or SubscriptionChange' }),
  Attempt: Type.Integer({ description: '1 for the first attempt of the call' }),
  Manual: Type.Boolean({ description: 'A redelivery asked for through this API' }),
  Status: Type.String({ description: 'Delivered, Retrying (the next attempt is scheduled) or Failed (given up)' }),
  HttpStatus: Type.Union([Type.Integer(), Type.Null()], { description: 'null when no answer came' }),
  LatencyMs: Type.Integer(),
  Response: Type.String({ description: 'The start of the answer’s body (at most 1,000 characters)' }),
  Error: Type.Union([Type.String(), Type.Null()]),
  AttemptedAt: Type.String(),
  NextAttemptAt: Type.Union([Type.String(), Type.Null()]),
});
const DeliveriesResponse = Type.Object({ TotalCount: Type.Integer(), Deliveries: Type.Array(Delivery) });
const RetryResponse = Type.Object({ DeliveryID: Type.String(), Message: Type.String() });
const NOT_FOUND = { 404: 'ErrorCode 1400: no webhook with this ID in the organization' };
const DELIVERY_NOT_FOUND = {
  404: 'ErrorCode 1400: no webhook with this ID in the organization; ErrorCode 1407: no such delivery of it',
};

function webhookIdOf(id: string): number {
  const value = /^[1-9][0-9]{0,15}$/.test(id) ? Number(id) : NaN;
  if (!Number.isSafeInteger(value)) throw new ApiError('WebhookNotFound', { webhookId: id });
  return value;
}

export function webhookDeliveryRoutes(deps: ApiDependencies) {
  const deliveries = new WebhookDeliveries({
    log: new WebhookDeliveryLog(deps.redis),
    store: deps.store,
    now: () => deps.now(),
  });
  /** The organization's webhook, or 404 (another organization's webhook reads as missing). */
  const requireWebhook = async (organizationId: string, id: string) => {
    const webhookId = webhookIdOf(id);
    const webhook = await deps.accounts.webhook(organizationId, webhookId);
    if (!webhook) throw new ApiError('WebhookNotFound', { webhookId: id });
    return webhookId;
  };

  return async function (app: Api): Promise<void> {
    app.get(
      '/webhooks/:id/deliveries',
      {
        config: { scope: 'webhooks:manage' },
        schema: {
          tags: ['webhooks'],
          summary: 'The last attempts of the webhook’s calls, newest first',
          params: IdParams,
          querystring: DeliveriesQuery,
          response: {
            200: DeliveriesResponse,
            ...errorResponses([401, 403, 404, 422, 503], {
              ...NOT_FOUND,
              422: 'ErrorCode 300: count is not a whole number from 1 to 100',
            }),
          },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const webhookId = await requireWebhook(key.organizationId, request.params.id);
        const attempts = await deliveries.attempts(
          key.organizationId,
          webhookId,
          request.query.count === undefined ? undefined : Number(request.query.count),
        );
        return {
          TotalCount: attempts.length,
          Deliveries: attempts.map((attempt) => ({
            DeliveryID: attempt.callId,
            WebhookID: attempt.webhookId,
            RecordType: attempt.recordType,
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
      },
    );

    app.post(
      '/webhooks/:id/deliveries/:deliveryId/retry',
      {
        config: { scope: 'webhooks:manage' },
        schema: {
          tags: ['webhooks'],
          summary: 'Makes a call again, once, with the same body and Webhook-Id (a new timestamp and signature)',
          params: RetryParams,
          response: { 200: RetryResponse, ...errorResponses([401, 403, 404, 503], DELIVERY_NOT_FOUND) },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const webhookId = await requireWebhook(key.organizationId, request.params.id);
        const first = await deliveries.redeliver(key.organizationId, webhookId, request.params.deliveryId);
        if (!first) {
          throw new ApiError('WebhookDeliveryNotFound', {
            webhookId: request.params.id,
            deliveryId: request.params.deliveryId,
          });
        }
        return { DeliveryID: first.data.callId, Message: 'Redelivery scheduled.' };
      },
    );
  };
}
