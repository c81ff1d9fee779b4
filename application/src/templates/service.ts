import { randomInt, randomUUID } from 'node:crypto';
import {
  DomainError,
  findTemplate,
  parseTemplate,
  renderTemplateSet,
  TEMPLATE_ID_MAX,
  templateLibraryDecider,
  templateNotFound,
  TEMPLATE_TYPES,
  type ParsedTemplate,
  type TemplateCommand,
  type TemplateEvent,
  type TemplateInput,
  type TemplateLibraryState,
  type TemplateRendering,
  type TemplateState,
  type TemplateType,
  type TemplateUsed,
} from '@sendline/domain';
import { CommandHandler, type EventAppender, type TemplatesView } from '@sendline/infra';
import juice from 'juice';

/**
 * An organization's templates (Postmark's `/templates`) and what a send with a template renders. Each change runs
 * through the template library decider (CommandHandler: decide on the view's state, append to the accounts topic,
 * apply to the view at once, so the caller reads its own write). Rendering is the domain's (Mustachio, within its
 * limits); CSS inlining is juice's, on the rendered HTML, never on the model alone.
 */
export interface TemplatesServiceOptions {
  store: EventAppender;
  view: TemplatesView;
  now?: () => number;
  newId?: () => string;
  /** A fresh template id (a positive integer, as Postmark's). */
  newTemplateId?: () => number;
  /** Who runs the use cases, recorded in every event they append: 'api key sl_live_ab12'… */
  actor?: string;
}

export interface TemplateListFilter {
  count: number;
  offset: number;
  templateType?: TemplateType | 'All' | undefined;
  layoutTemplate?: string | undefined;
}

/** A template rendered for a send: what POST /email's Subject and bodies would have been, and its version. */
export interface RenderedTemplate {
  subject: string;
  htmlBody: string | undefined;
  textBody: string | undefined;
  template: TemplateUsed;
}

/** What a send names: a template by id or alias, the model, and whether to inline CSS (default true). */
export interface TemplateSendInput {
  templateId?: number | undefined;
  templateAlias?: string | undefined;
  templateModel: unknown;
  inlineCss?: boolean | undefined;
}

/**
 * juice's settings: the `<style>` rules moved into `style` attributes and the tags removed, media queries (which
 * cannot be inlined) kept in a `<style>`. The extras (width and height attributes from CSS, table attributes, CSS
 * variables resolved, pseudo-elements, font faces and keyframes kept) are off: they doubled the time of an inlining
 * (0.5 to 1.0 ms against 2.2 ms for a receipt in its layout, on a loaded machine) for what email clients seldom need.
 */
const JUICE_OPTIONS = {
  removeStyleTags: true,
  preserveMediaQueries: true,
  applyWidthAttributes: false,
  applyHeightAttributes: false,
  applyAttributesTableElements: false,
  insertPreservedExtraCss: true,
  preserveFontFaces: false,
  preserveImportant: false,
  preservePseudos: false,
  preserveKeyFrames: false,
  inlinePseudoElements: false,
  resolveCSSVariables: false,
};

/** Inlines the `<style>` rules of rendered HTML into style attributes (juice); the HTML unchanged when it has none. */
export function inlineCss(html: string): string {
  if (!/<style[\s>]/i.test(html)) return html;
  return juice(html, JUICE_OPTIONS);
}

/** Parsed templates by their source: a send parses each template once, not per message (a parse is immutable). */
class ParseCache {
  private readonly parsed = new Map<string, ParsedTemplate>();
  constructor(private readonly maxEntries = 500) {}

  readonly parse = (source: string): ParsedTemplate => {
    const hit = this.parsed.get(source);
    if (hit) {
      // Most recently used last: the first entry is the one to drop.
      this.parsed.delete(source);
      this.parsed.set(source, hit);
      return hit;
    }
    const fresh = parseTemplate(source);
    this.parsed.set(source, fresh);
    if (this.parsed.size > this.maxEntries) this.parsed.delete(this.parsed.keys().next().value!);
    return fresh;
  };
}

export class TemplatesService {
  private readonly parseCache = new ParseCache();
  private readonly handler: CommandHandler<TemplateLibraryState, TemplateCommand, TemplateEvent>;

  constructor(private readonly options: TemplatesServiceOptions) {
    this.handler = new CommandHandler({
      decider: templateLibraryDecider,
      store: options.store,
      apply: (events) => options.view.apply(events),
    });
  }

  /** A command's metadata; `actor` (who asks, e.g. 'api key sl_live_ab12') is recorded in its events. */
  private metadata(organizationId: string, actor: string | undefined) {
    const who = actor ?? this.options.actor;
    return {
      organizationId,
      now: (this.options.now ?? Date.now)(),
      eventIds: [(this.options.newId ?? randomUUID)()],
      ...(who ? { actor: who } : {}),
    };
  }

  /** The templates, by id, filtered as Postmark's list is; and how many match. */
  async list(
    organizationId: string,
    filter: TemplateListFilter,
  ): Promise<{ total: number; templates: TemplateState[] }> {
    const library = await this.options.view.library(organizationId);
    const layout = filter.layoutTemplate?.toLowerCase();
    const matching = [...library.templates.values()]
      .filter((t) => !filter.templateType || filter.templateType === 'All' || t.templateType === filter.templateType)
      .filter((t) => layout === undefined || t.layoutTemplate?.toLowerCase() === layout)
      .sort((a, b) => a.templateId - b.templateId);
    return { total: matching.length, templates: matching.slice(filter.offset, filter.offset + filter.count) };
  }

  async get(organizationId: string, idOrAlias: string): Promise<TemplateState> {
    const template = findTemplate(await this.options.view.library(organizationId), idOrAlias);
    if (!template) throw templateNotFound(idOrAlias);
    return template;
  }

  /** Every version of a template, oldest first. */
  async versions(organizationId: string, idOrAlias: string): Promise<TemplateState[]> {
    const template = await this.get(organizationId, idOrAlias);
    return (await this.options.view.versions(organizationId, template.templateId)) ?? [template];
  }

  async create(organizationId: string, input: TemplateInput, actor?: string): Promise<TemplateState> {
    const library = await this.options.view.library(organizationId);
    let templateId = this.newTemplateId();
    while (library.templates.has(templateId) || library.deletedIds.has(templateId)) templateId = this.newTemplateId();
    const [event] = await this.handler.handle(
      { type: 'CreateTemplate', data: { ...input, templateId }, metadata: this.metadata(organizationId, actor) },
      library,
    );
    return event?.type === 'TemplateCreated'
      ? { ...event.data, createdAt: event.metadata.occurredAt, updatedAt: event.metadata.occurredAt }
      : this.get(organizationId, String(templateId));
  }

  async edit(organizationId: string, idOrAlias: string, input: TemplateInput, actor?: string): Promise<TemplateState> {
    const library = await this.options.view.library(organizationId);
    const events = await this.handler.handle(
      { type: 'EditTemplate', data: { ...input, idOrAlias }, metadata: this.metadata(organizationId, actor) },
      library,
    );
    const edited = events[0];
    if (edited?.type === 'TemplateEdited') {
      return { ...edited.data, updatedAt: edited.metadata.occurredAt };
    }
    return this.get(organizationId, idOrAlias);
  }

  async delete(organizationId: string, idOrAlias: string, actor?: string): Promise<void> {
    const library = await this.options.view.library(organizationId);
    await this.handler.handle(
      { type: 'DeleteTemplate', data: { idOrAlias }, metadata: this.metadata(organizationId, actor) },
      library,
    );
  }

  /**
   * Postmark's validation: Subject, HtmlBody and TextBody rendered against the test model (the named layout
   * around a standard template), with their errors and the model they suggest. Saves nothing.
   */
  async validate(
    organizationId: string,
    input: {
      subject?: string | null | undefined;
      htmlBody?: string | null | undefined;
      textBody?: string | null | undefined;
      templateType?: string | undefined;
      layoutTemplate?: string | null | undefined;
      testRenderModel?: unknown;
      inlineCssForHtmlTestRender?: boolean | undefined;
    },
  ): Promise<TemplateRendering> {
    const templateType = TEMPLATE_TYPES.find(
      (t) => t.toLowerCase() === (input.templateType ?? 'Standard').toLowerCase(),
    );
    if (!templateType)
      throw new DomainError('InvalidTemplateField', "The 'TemplateType' must be 'Standard' or 'Layout'.");
    let layout: TemplateState | null = null;
    if (templateType === 'Standard' && input.layoutTemplate) {
      layout = findTemplate(await this.options.view.library(organizationId), input.layoutTemplate);
      if (!layout || layout.templateType !== 'Layout') throw templateNotFound(input.layoutTemplate);
    }
    const rendering = renderTemplateSet(
      {
        subject: input.subject ?? null,
        htmlBody: input.htmlBody ?? null,
        textBody: input.textBody ?? null,
        templateType,
        layout,
      },
      input.testRenderModel ?? {},
    );
    const html = rendering.htmlBody.renderedContent;
    if (html !== null && input.inlineCssForHtmlTestRender !== false) {
      rendering.htmlBody.renderedContent = inlineCss(html);
    }
    return rendering;
  }

  /**
   * A send's template rendered: found by id or alias among the organization's (1101), a standard one (a layout is
   * not sent), with its layout, against the model (1109 when none), the CSS inlined unless InlineCss is false. A
   * part that does not render is 1122 with the reason.
   */
  render(library: TemplateLibraryState, input: TemplateSendInput): RenderedTemplate {
    const idOrAlias = input.templateId ?? input.templateAlias;
    if (idOrAlias === undefined || idOrAlias === '') {
      throw new DomainError('TemplateFieldMissing', "Either 'TemplateId' or 'TemplateAlias' is required.");
    }
    const template = findTemplate(library, idOrAlias);
    if (!template) throw templateNotFound(idOrAlias);
    if (template.templateType !== 'Standard') {
      throw new DomainError(
        'InvalidTemplateField',
        `The template '${String(idOrAlias)}' is a layout: layouts are not sent.`,
      );
    }
    if (input.templateModel === undefined || input.templateModel === null || typeof input.templateModel !== 'object') {
      throw new DomainError('TemplateModelMissing', "The 'TemplateModel' is required (an object).");
    }
    const layout = template.layoutTemplate ? findTemplate(library, template.layoutTemplate) : null;
    if (template.layoutTemplate && !layout) throw templateNotFound(template.layoutTemplate);
    const rendering = renderTemplateSet({ ...template, layout }, input.templateModel, undefined, this.parseCache.parse);
    for (const [field, part] of [
      ['Subject', rendering.subject],
      ['HtmlBody', rendering.htmlBody],
      ['TextBody', rendering.textBody],
    ] as const) {
      const error = part.validationErrors[0];
      if (error)
        throw new DomainError(
          'InvalidTemplateField',
          `The template's ${field} could not be rendered: ${error.message}`,
        );
    }
    const html = rendering.htmlBody.renderedContent;
    return {
      subject: rendering.subject.renderedContent ?? '',
      htmlBody: html === null ? undefined : input.inlineCss === false ? html : inlineCss(html),
      textBody: rendering.textBody.renderedContent ?? undefined,
      template: { templateId: template.templateId, version: template.version },
    };
  }

  /**
   * The templates a send names (by id or alias) and their layouts, as they stand: one read for a whole batch, whose
   * cost does not grow with the organization's other templates.
   */
  libraryFor(organizationId: string, names: readonly (string | number)[]): Promise<TemplateLibraryState> {
    return this.options.view.libraryFor(organizationId, names);
  }

  private newTemplateId(): number {
    return (this.options.newTemplateId ?? (() => randomInt(1_000_000, TEMPLATE_ID_MAX)))();
  }
}
