import type { WebhookSummary, WebhookInput } from '@sendline/application';
import { validateWebhookMessageStream, type WebhookTriggersChange } from '@sendline/domain';
import type { StoredApiKey } from '@sendline/infra';
import { Type, type Static } from 'typebox';
import { requireKey } from '../auth';
import type { Api, ApiDependencies } from '../context';
import { ApiError } from '../errors';
import { documented, documentedEnum, errorResponses } from '../openapi';

/** The actor the console's audit shows for a change made with an API key: the key's prefix, never its secret. */
function keyActor(key: StoredApiKey): string {
  return `api key ${key.prefix}`;
}

/**
 * Postmark's webhooks API (`/webhooks`), field for field, so Postmark's clients configure our webhooks unchanged,
 * plus two fields of ours: `SigningSecret`, in the answer to a creation only (every call is signed with it, see
 * docs/webhooks.md), and `Disabled`, set while the webhook is disabled for failing every call for 24 hours (any
 * PUT enables it again). HttpAuth's password is never shown again: it reads as `********`, and sending that mask
 * back keeps the password.
 *
 * A body that does not fit the schema is answered 422 with ErrorCode 403 naming the field (Postmark's "the JSON is
 * valid but not what we expect"), not the send routes' 300; a field that breaks a webhook rule has its own ErrorCode
 * (1401..1406, errors.ts); an id the organization has no webhook of is 404 with ErrorCode 1400, whatever
 * organization may have it.
 */

const Enabled = Type.Boolean({ description: 'Whether the trigger sends' });
const Trigger = Type.Object({ Enabled }, { additionalProperties: false });
const ContentTrigger = (description: string) =>
  Type.Object({ Enabled, IncludeContent: Type.Boolean({ description }) }, { additionalProperties: false });
const OpenTrigger = Type.Object(
  { Enabled, PostFirstOpenOnly: Type.Boolean({ description: 'Only the first open of a message' }) },
  { additionalProperties: false },
);
const NOT_SENT_YET = 'Accepted, stored and shown; not sent yet (the service does not track this event yet).';

const Triggers = Type.Object(
  {
    Delivery: Trigger,
    Bounce: ContentTrigger('Include the bounced message in the payload'),
    SubscriptionChange: Trigger,
    Open: Type.Object(OpenTrigger.properties, { additionalProperties: false, description: NOT_SENT_YET }),
    Click: Type.Object(Trigger.properties, { additionalProperties: false, description: NOT_SENT_YET }),
    SpamComplaint: Type.Object(ContentTrigger('Include the message in the payload').properties, {
      additionalProperties: false,
      description: NOT_SENT_YET,
    }),
  },
  { additionalProperties: false },
);

/** In a request every trigger, and every field of a trigger, may be left out (left as it is). */
const Maybe = Type.Optional(Type.Boolean());
const TriggersChange = Type.Object(
  {
    Delivery: Type.Optional(Type.Object({ Enabled: Maybe }, { additionalProperties: false })),
    Bounce: Type.Optional(Type.Object({ Enabled: Maybe, IncludeContent: Maybe }, { additionalProperties: false })),
    SubscriptionChange: Type.Optional(Type.Object({ Enabled: Maybe }, { additionalProperties: false })),
    Open: Type.Optional(
      Type.Object(
        { Enabled: Maybe, PostFirstOpenOnly: Maybe },
        { additionalProperties: false, description: NOT_SENT_YET },
      ),
    ),
    Click: Type.Optional(Type.Object({ Enabled: Maybe }, { additionalProperties: false, description: NOT_SENT_YET })),
    SpamComplaint: Type.Optional(
      Type.Object(
        { Enabled: Maybe, IncludeContent: Maybe },
        { additionalProperties: false, description: NOT_SENT_YET },
      ),
    ),
  },
  { additionalProperties: false, description: 'The triggers to set; one left out keeps its value (off when created)' },
);

const HttpAuth = Type.Object(
  {
    Username: Type.String({ maxLength: 256 }),
    Password: Type.String({ maxLength: 256, description: 'Stored sealed; shown as ******** afterwards' }),
  },
  { additionalProperties: false, description: 'HTTP Basic credentials sent with every call; empty strings: none' },
);
const HttpHeaders = Type.Array(
  Type.Object({ Name: Type.String(), Value: Type.String() }, { additionalProperties: false }),
  { description: 'Headers sent with every call (no line breaks; not one the service sets itself)' },
);

// The route checks the form itself (ErrorCode 1403, and plain http is fine in development): documented only.
const Url = documented(
  Type.String({
    description: 'Absolute https URL of a public host (plain http only in development, SENDLINE_DEV=1)',
    maxLength: 2048,
  }),
  { format: 'uri', pattern: '^https://[^/?#@\\s]+' },
);

const CreateRequest = Type.Object(
  {
    Url,
    MessageStream: Type.Optional(documentedEnum(Type.String({ description: 'Default: outbound' }), ['outbound'])),
    HttpAuth: Type.Optional(Type.Union([HttpAuth, Type.Null()])),
    HttpHeaders: Type.Optional(Type.Union([HttpHeaders, Type.Null()])),
    Triggers: Type.Optional(Type.Union([TriggersChange, Type.Null()])),
  },
  { additionalProperties: false },
);

const UpdateRequest = Type.Object(
  {
    // A webhook read with GET can be sent back whole: its ID (the path's is the one that counts) and its stream,
    // which cannot change, are accepted.
    ID: Type.Optional(Type.Integer({ description: 'Ignored: the path names the webhook' })),
    Disabled: Type.Optional(
      Type.Unknown({ description: 'Ignored: any PUT enables a webhook disabled for failing again' }),
    ),
    MessageStream: Type.Optional(documentedEnum(Type.String({ description: 'Cannot change: outbound' }), ['outbound'])),
    Url: Type.Optional(Url),
    HttpAuth: Type.Optional(Type.Union([HttpAuth, Type.Null()], { description: 'null: no credentials any more' })),
    HttpHeaders: Type.Optional(Type.Union([HttpHeaders, Type.Null()])),
    Triggers: Type.Optional(Type.Union([TriggersChange, Type.Null()])),
  },
  { additionalProperties: false, description: 'The fields to change; one left out keeps its value' },
);

const Webhook = Type.Object({
  ID: Type.Integer(),
  Url: Type.String(),
  MessageStream: Type.String(),
  HttpAuth: Type.Optional(
    Type.Object({ Username: Type.String(), Password: Type.String({ description: 'Always ********' }) }),
  ),
  HttpHeaders: Type.Array(Type.Object({ Name: Type.String(), Value: Type.String() })),
  Triggers,
  Disabled: Type.Union([
    Type.Object(
      {
        At: Type.String({ format: 'date-time', description: 'When it was disabled' }),
        FailingSince: Type.String({ format: 'date-time', description: 'The first failed call of the streak' }),
        Reason: Type.String({ description: "The last call's failure, e.g. answered 500" }),
      },
      {
        description:
          'Ours: the webhook failed every call for 24 hours and is called no more; a PUT enables it again. null while enabled',
      },
    ),
    Type.Null(),
  ]),
});

const CreatedWebhook = Type.Object({
  ...Webhook.properties,
  SigningSecret: Type.String({
    description:
      'Ours: the secret every call is signed with (Webhook-Signature, Standard Webhooks). Shown here, once, never again',
  }),
});

const ListQuery = Type.Object(
  {
    MessageStream: Type.Optional(
      documentedEnum(Type.String({ description: 'Only the webhooks of this stream' }), ['outbound']),
    ),
    // The postmark npm client spells it so.
    messageStream: Type.Optional(documentedEnum(Type.String({ description: 'Same as MessageStream' }), ['outbound'])),
  },
  { additionalProperties: true },
);
const IdParams = Type.Object({ id: Type.String({ description: "The webhook's ID" }) });

const ERRORS_422 =
  'ErrorCode 403: the body does not fit the schema (the field is named in Message); ErrorCode 402: malformed JSON; ' +
  'ErrorCode 1235: a message stream other than outbound; ErrorCode 1401: ten webhooks on the stream already; ' +
  'ErrorCode 1402: the Url leads to a loopback, private, link-local or metadata address; ErrorCode 1403: an invalid ' +
  'Url (not https, credentials in it…); 1404: invalid HttpAuth; 1405: invalid HttpHeaders; 1406: invalid Triggers';
const NOT_FOUND = { 404: 'ErrorCode 1400: no webhook with this ID in the organization' };

type WebhookAnswer = Static<typeof Webhook>;

function toAnswer(webhook: WebhookSummary): WebhookAnswer {
  const { triggers } = webhook;
  return {
    ID: webhook.id,
    Url: webhook.url,
    MessageStream: webhook.messageStream,
    ...(webhook.httpAuth
      ? { HttpAuth: { Username: webhook.httpAuth.username, Password: webhook.httpAuth.password } }
      : {}),
    HttpHeaders: webhook.httpHeaders.map(({ name, value }) => ({ Name: name, Value: value })),
    Triggers: {
      Delivery: { Enabled: triggers.delivery.enabled },
      Bounce: { Enabled: triggers.bounce.enabled, IncludeContent: triggers.bounce.includeContent },
      SubscriptionChange: { Enabled: triggers.subscriptionChange.enabled },
      Open: { Enabled: triggers.open.enabled, PostFirstOpenOnly: triggers.open.postFirstOpenOnly },
      Click: { Enabled: triggers.click.enabled },
      SpamComplaint: { Enabled: triggers.spamComplaint.enabled, IncludeContent: triggers.spamComplaint.includeContent },
    },
    Disabled: webhook.disabled
      ? {
          At: new Date(webhook.disabled.at).toISOString(),
          FailingSince: new Date(webhook.disabled.failingSince).toISOString(),
          Reason: webhook.disabled.reason,
        }
      : null,
  };
}

type TriggersBody = Static<typeof TriggersChange>;

function triggersChange(body: TriggersBody | null | undefined): WebhookTriggersChange | undefined {
  if (!body) return undefined;
  const change: WebhookTriggersChange = {};
  if (body.Delivery) change.delivery = { enabled: body.Delivery.Enabled };
  if (body.Bounce) change.bounce = { enabled: body.Bounce.Enabled, includeContent: body.Bounce.IncludeContent };
  if (body.SubscriptionChange) change.subscriptionChange = { enabled: body.SubscriptionChange.Enabled };
  if (body.Open) change.open = { enabled: body.Open.Enabled, postFirstOpenOnly: body.Open.PostFirstOpenOnly };
  if (body.Click) change.click = { enabled: body.Click.Enabled };
  if (body.SpamComplaint) {
    change.spamComplaint = { enabled: body.SpamComplaint.Enabled, includeContent: body.SpamComplaint.IncludeContent };
  }
  // A field left out is undefined here; the domain reads undefined as "keep".
  return change;
}

function toInput(body: Omit<Static<typeof UpdateRequest>, 'MessageStream'> & { MessageStream?: string }): WebhookInput {
  return {
    url: body.Url,
    messageStream: body.MessageStream,
    httpAuth:
      body.HttpAuth === undefined
        ? undefined
        : body.HttpAuth === null
          ? null
          : { username: body.HttpAuth.Username, password: body.HttpAuth.Password },
    // null reads as "none" on a creation and "keep" on a change, as a client that always sends the field means it.
    httpHeaders: body.HttpHeaders?.map((header) => ({ name: header.Name, value: header.Value })),
    triggers: triggersChange(body.Triggers),
  };
}

/** A schema error as Postmark's 403 naming the field (the route attaches validation instead of failing early). */
function refuseInvalidBody(error: { validation?: { instancePath?: string; message?: string }[] } | undefined) {
  if (!error) return;
  const first = error.validation?.[0];
  const path = first?.instancePath ? first.instancePath.slice(1).replace(/\//g, '.') : '';
  throw new ApiError('IncompatibleJson', {
    detail: `Invalid request: ${path ? `'${path}' ` : ''}${first?.message ?? 'is invalid'}.`,
  });
}

/** A path id that is not a whole number names no webhook: 404, as an unknown one. */
function webhookId(id: string): number {
  const value = /^[1-9][0-9]{0,15}$/.test(id) ? Number(id) : NaN;
  if (!Number.isSafeInteger(value)) throw new ApiError('WebhookNotFound', { webhookId: id });
  return value;
}

export function webhookRoutes(deps: ApiDependencies) {
  const service = deps.webhooks;
  return async function (app: Api): Promise<void> {
    app.get(
      '/webhooks',
      {
        config: { scope: 'webhooks:manage' },
        schema: {
          tags: ['webhooks'],
          summary: "The organization's webhooks, oldest first; MessageStream filters",
          querystring: ListQuery,
          response: {
            200: Type.Object({ Webhooks: Type.Array(Webhook) }),
            ...errorResponses([401, 403, 422, 503], { 422: 'ErrorCode 1235: a message stream other than outbound' }),
          },
        },
      },
      async (request) => {
        const key = requireKey(request);
        // Each spelling given is judged: an empty or unknown one beside a valid one is still refused.
        const given = [request.query.MessageStream, request.query.messageStream].filter((s) => s !== undefined);
        for (const stream of given) validateWebhookMessageStream(stream);
        const webhooks = await service.list(key.organizationId, given[0]);
        return { Webhooks: webhooks.map(toAnswer) };
      },
    );

    app.post(
      '/webhooks',
      {
        config: { scope: 'webhooks:manage' },
        attachValidation: true,
        schema: {
          tags: ['webhooks'],
          summary: 'Create a webhook; the answer holds its SigningSecret, shown this once',
          body: CreateRequest,
          response: {
            200: CreatedWebhook,
            ...errorResponses([401, 403, 413, 415, 422, 503], { 422: ERRORS_422 }),
          },
        },
      },
      async (request) => {
        refuseInvalidBody(request.validationError);
        const key = requireKey(request);
        const created = await service.as(keyActor(key)).create(key.organizationId, toInput(request.body));
        return { ...toAnswer(created), SigningSecret: created.signingSecret };
      },
    );

    app.get(
      '/webhooks/:id',
      {
        config: { scope: 'webhooks:manage' },
        schema: {
          tags: ['webhooks'],
          summary: 'One webhook',
          params: IdParams,
          response: { 200: Webhook, ...errorResponses([401, 403, 404, 503], NOT_FOUND) },
        },
      },
      async (request) => {
        const key = requireKey(request);
        return toAnswer(await service.get(key.organizationId, webhookId(request.params.id)));
      },
    );

    app.put(
      '/webhooks/:id',
      {
        config: { scope: 'webhooks:manage' },
        attachValidation: true,
        schema: {
          tags: ['webhooks'],
          summary: 'Change a webhook: the fields given; the others keep their values',
          params: IdParams,
          body: UpdateRequest,
          response: {
            200: Webhook,
            ...errorResponses([401, 403, 404, 413, 415, 422, 503], { ...NOT_FOUND, 422: ERRORS_422 }),
          },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const id = webhookId(request.params.id);
        // An unknown webhook is 404 before its body is judged, as Postmark answers.
        await service.get(key.organizationId, id);
        refuseInvalidBody(request.validationError);
        const { MessageStream: stream, Disabled: _ignored, ...change } = request.body;
        if (stream !== undefined) validateWebhookMessageStream(stream);
        return toAnswer(await service.as(keyActor(key)).update(key.organizationId, id, toInput(change)));
      },
    );

    app.delete(
      '/webhooks/:id',
      {
        config: { scope: 'webhooks:manage' },
        schema: {
          tags: ['webhooks'],
          summary: 'Delete a webhook: it is called no more',
          params: IdParams,
          response: {
            200: Type.Object({ ErrorCode: Type.Integer(), Message: Type.String() }),
            ...errorResponses([401, 403, 404, 503], NOT_FOUND),
          },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const id = webhookId(request.params.id);
        await service.as(keyActor(key)).delete(key.organizationId, id);
        return { ErrorCode: 0, Message: `Webhook ${id} removed.` };
      },
    );
  };
}
