import { Type } from 'typebox';
import type { Api, ApiDependencies } from '../context';
import { ApiError } from '../errors';
import {
  answerOf,
  inputOf,
  summaryOf,
  Template,
  templateSends,
  TemplateRequest,
  TemplateSummary,
  templateVersions,
  ValidateRequest,
  ValidateResponse,
  validateTemplate,
  VersionsResponse,
} from '../routes/templates';
import { memberAllowedTo, memberOf } from './session';

/**
 * The Templates page: the public API's template use cases and answers (routes/templates.ts: same fields, same
 * errors), for the member's organization. Every role reads, previews (POST /templates/validate's rendering: it
 * saves nothing) and lists versions; admins and developers create, edit and delete, and send a test — a real send
 * with the template, through the send-with-template path of POST /email/withTemplate, always to the signed-in
 * member's own address. A change is recorded in the audit under the member's address.
 */

const IdOrAlias = Type.Object({ idOrAlias: Type.String({ minLength: 1, maxLength: 200 }) });

const ConsoleTemplateSummary = Type.Object({
  ...TemplateSummary.properties,
  Version: Type.Integer(),
  UpdatedAt: Type.String(),
});

export function templatesPage(deps: ApiDependencies) {
  const service = deps.templates;
  const sendWithTemplates = templateSends(deps);
  return async function (api: Api): Promise<void> {
    api.get(
      '/templates',
      {
        schema: {
          response: {
            200: Type.Object({ TotalCount: Type.Integer(), Templates: Type.Array(ConsoleTemplateSummary) }),
          },
        },
      },
      async (request) => {
        // An organization holds at most 100 templates (ErrorCode 1105): one page is all of them.
        const { total, templates } = await service.list(memberOf(request).organization.id, { count: 100, offset: 0 });
        return {
          TotalCount: total,
          Templates: templates.map((t) => ({
            ...summaryOf(t),
            Version: t.version,
            UpdatedAt: new Date(t.updatedAt).toISOString(),
          })),
        };
      },
    );

    api.post(
      '/templates/validate',
      { schema: { body: ValidateRequest, response: { 200: ValidateResponse } } },
      async (request) => validateTemplate(deps, memberOf(request).organization.id, request.body),
    );

    api.get('/templates/:idOrAlias', { schema: { params: IdOrAlias, response: { 200: Template } } }, async (request) =>
      answerOf(await service.get(memberOf(request).organization.id, request.params.idOrAlias)),
    );

    api.get(
      '/templates/:idOrAlias/versions',
      { schema: { params: IdOrAlias, response: { 200: VersionsResponse } } },
      async (request) => templateVersions(deps, memberOf(request).organization.id, request.params.idOrAlias),
    );

    api.post(
      '/templates',
      { schema: { body: TemplateRequest, response: { 200: TemplateSummary } } },
      async (request) => {
        const member = memberAllowedTo(request, 'manageTemplates', 'create templates');
        return summaryOf(await service.create(member.organization.id, inputOf(request.body), member.email));
      },
    );

    api.put(
      '/templates/:idOrAlias',
      { schema: { params: IdOrAlias, body: TemplateRequest, response: { 200: TemplateSummary } } },
      async (request) => {
        const member = memberAllowedTo(request, 'manageTemplates', 'edit templates');
        const edited = await service.edit(
          member.organization.id,
          request.params.idOrAlias,
          inputOf(request.body),
          member.email,
        );
        return summaryOf(edited);
      },
    );

    api.delete('/templates/:idOrAlias', { schema: { params: IdOrAlias } }, async (request, reply) => {
      const member = memberAllowedTo(request, 'manageTemplates', 'delete templates');
      const template = await service.get(member.organization.id, request.params.idOrAlias);
      await service.delete(member.organization.id, String(template.templateId), member.email);
      return reply.code(204).send();
    });

    api.post(
      '/templates/:idOrAlias/test',
      {
        schema: {
          params: IdOrAlias,
          body: Type.Object({
            From: Type.String({ maxLength: 320 }),
            TemplateModel: Type.Unknown(),
          }),
        },
      },
      async (request, reply) => {
        const member = memberAllowedTo(request, 'sendTestEmails', 'send test messages');
        const organizationId = member.organization.id;
        const template = await service.get(organizationId, request.params.idOrAlias);
        if (template.templateType === 'Layout') {
          throw new ApiError('InvalidEmailRequest', {
            detail: 'A layout is not sent on its own: send a test of a template that uses it.',
          });
        }
        // To the member's own address only, as a live send: it is delivered and counts in the allowance.
        const [outcome] = await sendWithTemplates(
          { organizationId, mode: 'live' },
          [
            {
              From: request.body.From,
              To: member.email,
              TemplateId: template.templateId,
              TemplateModel: request.body.TemplateModel ?? {},
              Tag: 'template-test',
            },
          ],
          undefined,
        );
        return reply.code(outcome!.status).send(outcome!.body);
      },
    );
  };
}
