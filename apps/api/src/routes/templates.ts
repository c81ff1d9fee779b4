import type { RenderedTemplate, SendingAs } from '@sendline/application';
import {
  DomainError,
  MAX_BATCH_MESSAGES,
  validateBatchSize,
  type RenderedPart,
  type TemplateInput,
  type TemplateState,
  type TemplateUsed,
} from '@sendline/domain';
import type { StoredApiKey } from '@sendline/infra';
import { Type, type Static, type TSchema } from 'typebox';
import { requireKey } from '../auth';
import { BATCH_BODY_LIMIT, SINGLE_BODY_LIMIT, type Api, type ApiDependencies } from '../context';
import { ApiError, errorAnswer, type ErrorParams } from '../errors';
import { documented, errorResponses } from '../openapi';
import { PostmarkSendAnswers, SendResult, type SendOutcome } from '../sending';
import { Count, Offset } from './activity';
import { idempotent, IdempotencyHeaders } from './email';

/**
 * Postmark's templates API (`/templates`, `/templates/validate`) and its sends with a template
 * (`/email/withTemplate`, `/email/batchWithTemplates`), field for field, plus `GET /templates/{idOrAlias}/versions`
 * (ours: every edit is a version). A template is named by its id or its alias; one organization never sees
 * another's (an id or alias of theirs is 1101, as an unknown one). A send with a template is rendered here and then
 * goes through the send use case as POST /email does: every rule of a plain send applies.
 */

const Optional = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
const TemplateTypeField = Type.String({ description: "'Standard' (default) or 'Layout'" });

export const TemplateRequest = Type.Object(
  {
    Name: Optional(Type.String()),
    Alias: Optional(Type.String({ description: "A letter, then letters, digits, '.', '-', '_'; null or '' for none" })),
    Subject: Optional(Type.String()),
    HtmlBody: Optional(Type.String()),
    TextBody: Optional(Type.String()),
    TemplateType: Optional(TemplateTypeField),
    LayoutTemplate: Optional(Type.String({ description: "The layout's alias; '' for none" })),
  },
  { additionalProperties: true },
);

export const TemplateSummary = Type.Object({
  TemplateId: Type.Integer(),
  Name: Type.String(),
  Alias: Type.Union([Type.String(), Type.Null()]),
  Active: Type.Boolean(),
  TemplateType: TemplateTypeField,
  LayoutTemplate: Type.Union([Type.String(), Type.Null()]),
});

export const Template = Type.Object({
  ...TemplateSummary.properties,
  Subject: Type.Union([Type.String(), Type.Null()]),
  HtmlBody: Type.Union([Type.String(), Type.Null()]),
  TextBody: Type.Union([Type.String(), Type.Null()]),
  AssociatedServerId: Type.Integer({ description: 'Always 0: an organization is one server' }),
  Version: Type.Integer({ description: 'Ours: 1 at creation, one more at each edit' }),
});

export const TemplateVersion = Type.Object({
  ...Template.properties,
  UpdatedAt: Type.String({ description: 'When this version was made (ISO 8601)' }),
});

const ListQuery = Type.Object(
  {
    count: Type.Optional(Count),
    offset: Type.Optional(Offset),
    TemplateType: Type.Optional(Type.String({ description: "'Standard', 'Layout' or 'All'" })),
    templateType: Type.Optional(Type.String()),
    LayoutTemplate: Type.Optional(Type.String()),
    layoutTemplate: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

const ValidationError = Type.Object({
  Message: Type.String(),
  Line: Type.Integer(),
  CharacterPosition: Type.Integer(),
});
export const ValidationSection = Type.Object({
  ContentIsValid: Type.Boolean(),
  ValidationErrors: Type.Array(ValidationError),
  RenderedContent: Type.Union([Type.String(), Type.Null()]),
});

export const ValidateRequest = Type.Object(
  {
    Subject: Optional(Type.String()),
    HtmlBody: Optional(Type.String()),
    TextBody: Optional(Type.String()),
    TestRenderModel: Optional(Type.Unknown()),
    TemplateType: Optional(TemplateTypeField),
    LayoutTemplate: Optional(Type.String()),
    InlineCssForHtmlTestRender: Optional(Type.Boolean()),
  },
  { additionalProperties: true },
);

const TemplateSendRequest = Type.Object(
  {
    TemplateId: Optional(Type.Integer()),
    TemplateAlias: Optional(Type.String()),
    TemplateModel: Optional(Type.Unknown({ description: 'ErrorCode 1109 when absent' })),
    InlineCss: Optional(Type.Boolean({ description: 'Inline the <style> rules of the HtmlBody; default true' })),
  },
  { additionalProperties: true, description: 'And every field of POST /email but Subject, HtmlBody and TextBody' },
);

const ERRORS_422 =
  'ErrorCode 1101: no such template or layout; 1105: the most templates; 1120: a required field missing; 1121: ' +
  'a field too large; 1122: an invalid field (syntax, alias taken); 1123: a field a layout may not have; 1130: ' +
  'the layout is used by templates; 1131: a layout body without exactly one {{{ @content }}}';
const SEND_ERRORS_422 =
  'ErrorCode 1101: no such template; 1109: no TemplateModel; 1122: the template did not render; 1123: Subject, ' +
  'HtmlBody or TextBody given; and every ErrorCode of POST /email';

export function summaryOf(t: TemplateState): Static<typeof TemplateSummary> {
  return {
    TemplateId: t.templateId,
    Name: t.name,
    Alias: t.alias,
    Active: true,
    TemplateType: t.templateType,
    LayoutTemplate: t.layoutTemplate,
  };
}

export function answerOf(t: TemplateState): Static<typeof Template> {
  return {
    ...summaryOf(t),
    Subject: t.subject,
    HtmlBody: t.htmlBody,
    TextBody: t.textBody,
    AssociatedServerId: 0,
    Version: t.version,
  };
}

export function inputOf(body: Static<typeof TemplateRequest>): TemplateInput {
  return {
    name: body.Name ?? undefined,
    alias: body.Alias,
    subject: body.Subject,
    htmlBody: body.HtmlBody,
    textBody: body.TextBody,
    templateType: body.TemplateType || undefined,
    layoutTemplate: body.LayoutTemplate,
  };
}

function sectionOf(part: RenderedPart): Static<typeof ValidationSection> {
  return {
    ContentIsValid: part.contentIsValid,
    ValidationErrors: part.validationErrors.map((e) => ({
      Message: e.message,
      Line: e.line,
      CharacterPosition: e.characterPosition,
    })),
    RenderedContent: part.renderedContent,
  };
}

export const ValidateResponse = Type.Object({
  AllContentIsValid: Type.Boolean(),
  Subject: ValidationSection,
  HtmlBody: ValidationSection,
  TextBody: ValidationSection,
  SuggestedTemplateModel: Type.Unknown(),
});

export const VersionsResponse = Type.Object({ TotalCount: Type.Integer(), Versions: Type.Array(TemplateVersion) });

/** POST /templates/validate's answer for an organization (the console's live preview runs the same). */
export async function validateTemplate(
  deps: ApiDependencies,
  organizationId: string,
  b: Static<typeof ValidateRequest>,
): Promise<Static<typeof ValidateResponse>> {
  const rendering = await deps.templates.validate(organizationId, {
    subject: b.Subject,
    htmlBody: b.HtmlBody,
    textBody: b.TextBody,
    templateType: b.TemplateType || undefined,
    layoutTemplate: b.LayoutTemplate,
    testRenderModel: b.TestRenderModel,
    inlineCssForHtmlTestRender: b.InlineCssForHtmlTestRender ?? undefined,
  });
  return {
    AllContentIsValid: rendering.allContentIsValid,
    Subject: sectionOf(rendering.subject),
    HtmlBody: sectionOf(rendering.htmlBody),
    TextBody: sectionOf(rendering.textBody),
    SuggestedTemplateModel: rendering.suggestedTemplateModel,
  };
}

/** GET /templates/{idOrAlias}/versions' answer: every version, newest first. */
export async function templateVersions(
  deps: ApiDependencies,
  organizationId: string,
  idOrAlias: string,
): Promise<Static<typeof VersionsResponse>> {
  const versions = await deps.templates.versions(organizationId, idOrAlias);
  return {
    TotalCount: versions.length,
    Versions: versions.map((v) => ({ ...answerOf(v), UpdatedAt: new Date(v.updatedAt).toISOString() })).reverse(),
  };
}

function keyActor(key: StoredApiKey): string {
  return `api key ${key.prefix}`;
}

const BODY_FIELDS = ['Subject', 'HtmlBody', 'TextBody'] as const;
const TEMPLATE_FIELDS = ['TemplateId', 'TemplateAlias', 'TemplateModel', 'InlineCss'] as const;

/** A send with a template as POST /email's body: the rendered Subject and bodies, the template's fields left out. */
function plainBody(body: Record<string, unknown>, rendered: RenderedTemplate): Record<string, unknown> {
  const rest: Record<string, unknown> = { ...body };
  for (const field of TEMPLATE_FIELDS) delete rest[field];
  return {
    ...rest,
    Subject: rendered.subject,
    ...(rendered.htmlBody !== undefined ? { HtmlBody: rendered.htmlBody } : {}),
    ...(rendered.textBody !== undefined ? { TextBody: rendered.textBody } : {}),
  };
}

/**
 * Sends with templates as `sender` (an API key; the console's "send a test"): renders each message's template and
 * sends those that rendered through the send use case; one outcome per message, in order (a message that did not
 * render carries its own ErrorCode).
 */
export function templateSends(deps: ApiDependencies) {
  const service = deps.templates;
  const sending = new PostmarkSendAnswers(deps);
  return async function sendWithTemplates(
    key: SendingAs,
    messages: unknown[],
    idempotency: Parameters<PostmarkSendAnswers['sendMany']>[2],
  ): Promise<SendOutcome[]> {
    const names = messages.flatMap((message) => {
      const { TemplateId, TemplateAlias } = (message ?? {}) as { TemplateId?: unknown; TemplateAlias?: unknown };
      const name = TemplateId ?? TemplateAlias;
      return typeof name === 'number' || (typeof name === 'string' && name !== '') ? [name] : [];
    });
    const library = await service.libraryFor(key.organizationId, [...new Set(names)]);
    const outcomes: (SendOutcome | undefined)[] = new Array(messages.length);
    const bodies: unknown[] = [];
    const used: TemplateUsed[] = [];
    const positions: number[] = [];
    for (const [index, message] of messages.entries()) {
      try {
        if (typeof message !== 'object' || message === null || Array.isArray(message)) {
          throw new ApiError('InvalidEmailRequest', { detail: 'Each message must be a JSON object.' });
        }
        const body = message as Record<string, unknown>;
        const given = BODY_FIELDS.filter((field) => body[field] !== undefined && body[field] !== null);
        if (given.length > 0) {
          throw new DomainError(
            'TemplateFieldNotAllowed',
            `A send with a template takes no ${given.join(', ')}: the template gives them.`,
          );
        }
        const templateId = body.TemplateId;
        const templateAlias = body.TemplateAlias;
        if (templateId !== undefined && templateId !== null && typeof templateId !== 'number') {
          throw new ApiError('IncompatibleJson', { detail: "Invalid request: 'TemplateId' must be a number." });
        }
        if (templateAlias !== undefined && templateAlias !== null && typeof templateAlias !== 'string') {
          throw new ApiError('IncompatibleJson', { detail: "Invalid request: 'TemplateAlias' must be a string." });
        }
        const rendered = service.render(library, {
          templateId: templateId ?? undefined,
          templateAlias: templateAlias ?? undefined,
          templateModel: body.TemplateModel,
          inlineCss: typeof body.InlineCss === 'boolean' ? body.InlineCss : undefined,
        });
        bodies.push(plainBody(body, rendered));
        used.push(rendered.template);
        positions.push(index);
      } catch (error) {
        if (error instanceof DomainError) {
          outcomes[index] = errorAnswer(error.code, { ...(error.details as ErrorParams), detail: error.message });
        } else if (error instanceof ApiError) outcomes[index] = errorAnswer(error.code, error.params);
        else throw error;
      }
    }
    if (bodies.length > 0) {
      const sent = await sending.sendMany(key, bodies, idempotency, used);
      sent.forEach((outcome, i) => (outcomes[positions[i]!] = outcome));
    }
    return outcomes.map((outcome) => outcome!);
  };
}

export function templateRoutes(deps: ApiDependencies) {
  const service = deps.templates;
  const sendWithTemplates = templateSends(deps);

  return async function (app: Api): Promise<void> {
    app.get(
      '/templates',
      {
        config: { scope: 'templates:read' },
        schema: {
          tags: ['templates'],
          summary: 'The organization’s templates and layouts, by id; TemplateType and LayoutTemplate filter',
          querystring: ListQuery,
          response: {
            200: Type.Object({ TotalCount: Type.Integer(), Templates: Type.Array(TemplateSummary) }),
            ...errorResponses([401, 403, 422, 503]),
          },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const q = request.query;
        // An empty filter is no filter, as in the other lists.
        const type = q.TemplateType || q.templateType || undefined;
        const templateType = ['Standard', 'Layout', 'All'].find((t) => t.toLowerCase() === type?.toLowerCase());
        if (type !== undefined && !templateType) {
          throw new DomainError('InvalidTemplateField', "TemplateType must be 'Standard', 'Layout' or 'All'.");
        }
        const { total, templates } = await service.list(key.organizationId, {
          count: q.count === undefined ? 100 : Number(q.count),
          offset: q.offset === undefined ? 0 : Number(q.offset),
          templateType: templateType as 'Standard' | 'Layout' | 'All' | undefined,
          layoutTemplate: q.LayoutTemplate || q.layoutTemplate || undefined,
        });
        return { TotalCount: total, Templates: templates.map(summaryOf) };
      },
    );

    app.post(
      '/templates',
      {
        config: { scope: 'templates:manage' },
        bodyLimit: SINGLE_BODY_LIMIT,
        schema: {
          tags: ['templates'],
          summary: 'Create a template or a layout (version 1)',
          body: TemplateRequest,
          response: { 200: TemplateSummary, ...errorResponses([401, 403, 413, 415, 422, 503], { 422: ERRORS_422 }) },
        },
      },
      async (request) => {
        const key = requireKey(request);
        return summaryOf(await service.create(key.organizationId, inputOf(request.body), keyActor(key)));
      },
    );

    app.post(
      '/templates/validate',
      {
        config: { scope: 'templates:read' },
        bodyLimit: SINGLE_BODY_LIMIT,
        schema: {
          tags: ['templates'],
          summary: 'Render Subject, HtmlBody and TextBody against TestRenderModel; errors at their line and character',
          body: ValidateRequest,
          response: {
            200: ValidateResponse,
            ...errorResponses([401, 403, 413, 415, 422, 503], { 422: 'ErrorCode 1101: no such layout' }),
          },
        },
      },
      async (request) => validateTemplate(deps, requireKey(request).organizationId, request.body),
    );

    const IdOrAlias = Type.Object({
      idOrAlias: Type.String({ minLength: 1, description: "The template's id or alias" }),
    });

    app.get(
      '/templates/:idOrAlias',
      {
        config: { scope: 'templates:read' },
        schema: {
          tags: ['templates'],
          summary: 'A template by its id or alias',
          params: IdOrAlias,
          response: {
            200: Template,
            ...errorResponses([401, 403, 422, 503], { 422: 'ErrorCode 1101: no such template' }),
          },
        },
      },
      async (request) => {
        const key = requireKey(request);
        return answerOf(await service.get(key.organizationId, request.params.idOrAlias));
      },
    );

    app.get(
      '/templates/:idOrAlias/versions',
      {
        config: { scope: 'templates:read' },
        schema: {
          tags: ['templates'],
          summary: 'Ours: every version of a template, newest first',
          params: IdOrAlias,
          response: {
            200: VersionsResponse,
            ...errorResponses([401, 403, 422, 503], { 422: 'ErrorCode 1101: no such template' }),
          },
        },
      },
      async (request) => {
        return templateVersions(deps, requireKey(request).organizationId, request.params.idOrAlias);
      },
    );

    app.put(
      '/templates/:idOrAlias',
      {
        config: { scope: 'templates:manage' },
        bodyLimit: SINGLE_BODY_LIMIT,
        schema: {
          tags: ['templates'],
          summary: 'Change a template: the fields given replace the current ones (a new version)',
          params: IdOrAlias,
          body: TemplateRequest,
          response: { 200: TemplateSummary, ...errorResponses([401, 403, 413, 415, 422, 503], { 422: ERRORS_422 }) },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const edited = await service.edit(
          key.organizationId,
          request.params.idOrAlias,
          inputOf(request.body),
          keyActor(key),
        );
        return summaryOf(edited);
      },
    );

    app.delete(
      '/templates/:idOrAlias',
      {
        config: { scope: 'templates:manage' },
        schema: {
          tags: ['templates'],
          summary: 'Delete a template (a layout in use is refused, 1130)',
          params: IdOrAlias,
          response: {
            200: Type.Object({ ErrorCode: Type.Integer(), Message: Type.String() }),
            ...errorResponses([401, 403, 422, 503], { 422: 'ErrorCode 1101: no such template; 1130: a layout in use' }),
          },
        },
      },
      async (request) => {
        const key = requireKey(request);
        const template = await service.get(key.organizationId, request.params.idOrAlias);
        await service.delete(key.organizationId, String(template.templateId), keyActor(key));
        return { ErrorCode: 0, Message: `Template ${template.templateId} removed.` };
      },
    );

    app.post(
      '/email/withTemplate',
      {
        bodyLimit: SINGLE_BODY_LIMIT,
        config: { scope: 'email:send' },
        schema: {
          tags: ['sending'],
          summary: 'Send one message rendered from a template (TemplateId or TemplateAlias, TemplateModel)',
          headers: IdempotencyHeaders,
          body: TemplateSendRequest,
          response: {
            200: SendResult,
            ...errorResponses([401, 403, 409, 413, 415, 422, 503], { 422: SEND_ERRORS_422 }),
          },
        },
      },
      (request, reply) =>
        idempotent(deps, request, reply, async (idempotency) => {
          const [outcome] = await sendWithTemplates(requireKey(request), [request.body], idempotency);
          return outcome!;
        }),
    );

    app.post(
      '/email/batchWithTemplates',
      {
        bodyLimit: BATCH_BODY_LIMIT,
        config: { scope: 'email:send' },
        schema: {
          tags: ['sending'],
          summary: `Send up to ${MAX_BATCH_MESSAGES} messages with templates; one result per message, in order`,
          headers: IdempotencyHeaders,
          body: Type.Object(
            { Messages: documented(Type.Array(Type.Unknown()), { maxItems: MAX_BATCH_MESSAGES }) },
            { additionalProperties: true },
          ),
          response: {
            200: Type.Array(SendResult),
            ...errorResponses([401, 403, 409, 413, 415, 422, 503], {
              422: `ErrorCode 300: no Messages array; 410: more than ${MAX_BATCH_MESSAGES} messages (each message’s own refusal is in its result)`,
            }),
          },
        },
      },
      (request, reply) =>
        idempotent(deps, request, reply, async (idempotency) => {
          const size = validateBatchSize(request.body.Messages.length);
          if (!size.ok) throw new ApiError(size.error.code, { detail: size.error.message });
          const outcomes = await sendWithTemplates(requireKey(request), request.body.Messages, idempotency);
          return { status: 200, body: outcomes.map((outcome) => outcome.body) };
        }),
    );
  };
}
