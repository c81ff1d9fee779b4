import { eventMetadata } from '../decider';
import { DomainError } from '../domainError';
import type { Command, DomainEvent } from '../event';
import {
  DEFAULT_RENDER_LIMITS,
  InferredModel,
  parseTemplate,
  renderTemplate,
  TemplateRenderError,
  type ParsedTemplate,
  type RenderLimits,
  type TemplateSyntaxError,
} from './mustachio';

/**
 * An organization's templates (Postmark's templates and layouts): their events, their state, the template library
 * decider's commands, and what a send with a template renders.
 *
 * Every change makes a new version, kept beside the others (beyond Postmark: `GET /templates/{id}/versions`).
 * On the compacted accounts topic each version is its own key (templateEventKey), so compaction keeps every
 * version, and the deletion its own, so it is never compacted away; the view reads them in any order (a version
 * of a deleted template stays deleted, the current version is the highest).
 */

export const TEMPLATE_TYPES = ['Standard', 'Layout'] as const;
export type TemplateType = (typeof TEMPLATE_TYPES)[number];

/** Postmark's limits: templates per server, and the size of a template's content. */
export const MAX_TEMPLATES = 100;
export const TEMPLATE_NAME_MAX_LENGTH = 200;
export const TEMPLATE_SUBJECT_MAX_LENGTH = 2000;
/** HtmlBody and TextBody, each. */
export const TEMPLATE_BODY_MAX_LENGTH = 512 * 1024;
export const TEMPLATE_ALIAS_MAX_LENGTH = 100;
/** Template ids are Postmark's: positive integers, drawn by the caller and never used twice. */
export const TEMPLATE_ID_MAX = 2 ** 31 - 1;
/** Where a layout puts the template's content: exactly once in each of its bodies. */
export const LAYOUT_CONTENT_PLACEHOLDER = /\{\{\{\s*@content\s*\}\}\}/g;

/** Postmark's alias: a letter first, then letters, digits, '.', '-' and '_'. */
const ALIAS = /^[A-Za-z][A-Za-z0-9._-]*$/;

/** A template as a version holds it (the whole template: each version replaces the last). */
export interface TemplateContent {
  name: string;
  alias: string | null;
  subject: string | null;
  htmlBody: string | null;
  textBody: string | null;
  templateType: TemplateType;
  /** A standard template's layout, by its alias; null for none (and always for a layout). */
  layoutTemplate: string | null;
}

export interface TemplateVersion extends TemplateContent {
  templateId: number;
  /** 1 at creation, one more at each edit. */
  version: number;
}

export type TemplateCreated = DomainEvent<'TemplateCreated', TemplateVersion>;
/** A new version: the whole template again, with when it was created. */
export type TemplateEdited = DomainEvent<'TemplateEdited', TemplateVersion & { createdAt: number }>;
/** The template is gone; `version` is its last. Its id is never used again. */
export type TemplateDeleted = DomainEvent<'TemplateDeleted', { templateId: number; version: number }>;
export type TemplateEvent = TemplateCreated | TemplateEdited | TemplateDeleted;
export type TemplateEventType = TemplateEvent['type'];
export const TEMPLATE_EVENT_TYPES: readonly TemplateEventType[] = [
  'TemplateCreated',
  'TemplateEdited',
  'TemplateDeleted',
];

export interface TemplateState extends TemplateVersion {
  createdAt: number;
  updatedAt: number;
}

/** The organization's templates, as the template library decider holds them (deleted ones are absent). */
export interface TemplateLibraryState {
  templates: ReadonlyMap<number, TemplateState>;
  /** Ids used once, deleted since: never given again. */
  deletedIds: ReadonlySet<number>;
}

export function initialTemplateLibraryState(): TemplateLibraryState {
  return { templates: new Map(), deletedIds: new Set() };
}

/** The state a version leaves. */
export function templateStateOf(event: TemplateCreated | TemplateEdited): TemplateState {
  const at = event.metadata.occurredAt;
  if (event.type === 'TemplateCreated') return { ...event.data, createdAt: at, updatedAt: at };
  return { ...event.data, updatedAt: at };
}

export function evolveTemplateLibrary(state: TemplateLibraryState, event: TemplateEvent): TemplateLibraryState {
  switch (event.type) {
    case 'TemplateCreated':
    case 'TemplateEdited': {
      if (state.deletedIds.has(event.data.templateId)) return state;
      const current = state.templates.get(event.data.templateId);
      if (current && current.version >= event.data.version) return state;
      const templates = new Map(state.templates);
      templates.set(event.data.templateId, templateStateOf(event));
      return { ...state, templates };
    }
    case 'TemplateDeleted': {
      const templates = new Map(state.templates);
      templates.delete(event.data.templateId);
      return { templates, deletedIds: new Set([...state.deletedIds, event.data.templateId]) };
    }
    default: {
      const _unknown: never = event;
      return state;
    }
  }
}

/**
 * The Kafka key of a template's event on the compacted accounts topic: each version its own key (compaction keeps
 * every version), the deletion its own (never replaced).
 */
export function templateEventKey(event: TemplateEvent): string {
  const org = event.metadata.organizationId;
  if (event.type === 'TemplateDeleted') return `template/${org}/${event.data.templateId}/deleted`;
  return `template/${org}/${event.data.templateId}/${event.data.version}`;
}

export function isTemplateId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 && value <= TEMPLATE_ID_MAX;
}

// ---- Finding a template ----

/** A template by id (digits) or alias, case-insensitively for an alias as Postmark does; null when none. */
export function findTemplate(state: TemplateLibraryState, idOrAlias: string | number): TemplateState | null {
  if (typeof idOrAlias === 'number' || /^\d+$/.test(idOrAlias)) {
    return state.templates.get(Number(idOrAlias)) ?? null;
  }
  const alias = idOrAlias.toLowerCase();
  for (const template of state.templates.values()) if (template.alias?.toLowerCase() === alias) return template;
  return null;
}

export function templateNotFound(idOrAlias: unknown): DomainError {
  return new DomainError('TemplateNotFound', `The template '${String(idOrAlias)}' was not found.`, {
    template: String(idOrAlias),
  });
}

function layoutNotFound(alias: string): DomainError {
  return new DomainError('TemplateNotFound', `The layout '${alias}' was not found.`, { template: alias });
}

// ---- Commands ----

/** A template as a caller gives it; absent fields take their default (create) or keep their value (edit). */
export interface TemplateInput {
  name?: string | undefined;
  alias?: string | null | undefined;
  subject?: string | null | undefined;
  htmlBody?: string | null | undefined;
  textBody?: string | null | undefined;
  templateType?: string | undefined;
  layoutTemplate?: string | null | undefined;
}

export type CreateTemplate = Command<'CreateTemplate', TemplateInput & { templateId: number }>;
export type EditTemplate = Command<'EditTemplate', TemplateInput & { idOrAlias: string }>;
export type DeleteTemplate = Command<'DeleteTemplate', { idOrAlias: string }>;
export type TemplateCommand = CreateTemplate | EditTemplate | DeleteTemplate;

const blankToNull = (value: string | null | undefined): string | null =>
  value === undefined || value === null || value === '' ? null : value;

/**
 * The rules of a template's content, over the library it joins: required fields (1120), sizes (1121), syntax and
 * alias (1122), fields a layout may not have (1123), the layout placeholder (1131), the layout it names (1101).
 */
export function checkTemplateContent(
  content: TemplateContent,
  state: TemplateLibraryState,
  templateId: number | null,
): void {
  const { name, alias, subject, htmlBody, textBody, templateType, layoutTemplate } = content;
  if (name.trim() === '') throw new DomainError('TemplateFieldMissing', "The 'Name' field is required.");
  if (name.length > TEMPLATE_NAME_MAX_LENGTH) {
    throw new DomainError('TemplateFieldTooLarge', `The 'Name' may be at most ${TEMPLATE_NAME_MAX_LENGTH} characters.`);
  }
  if (htmlBody === null && textBody === null) {
    throw new DomainError('TemplateFieldMissing', "The 'HtmlBody' or 'TextBody' field is required.");
  }
  for (const [field, value] of [
    ['HtmlBody', htmlBody],
    ['TextBody', textBody],
  ] as const) {
    if (value !== null && value.length > TEMPLATE_BODY_MAX_LENGTH) {
      throw new DomainError(
        'TemplateFieldTooLarge',
        `The '${field}' may be at most ${TEMPLATE_BODY_MAX_LENGTH} characters.`,
      );
    }
  }
  if (alias !== null) {
    if (alias.length > TEMPLATE_ALIAS_MAX_LENGTH || !ALIAS.test(alias)) {
      throw new DomainError(
        'InvalidTemplateField',
        `The 'Alias' must start with a letter and hold only letters, digits, '.', '-' and '_' (at most ${TEMPLATE_ALIAS_MAX_LENGTH}).`,
      );
    }
    const owner = findTemplate(state, alias);
    if (owner && owner.templateId !== templateId) {
      throw new DomainError('InvalidTemplateField', `The alias '${alias}' is already used by another template.`, {
        alias,
      });
    }
  }
  if (templateType === 'Layout') {
    if (subject !== null) throw new DomainError('TemplateFieldNotAllowed', "A layout may not have a 'Subject'.");
    if (layoutTemplate !== null) {
      throw new DomainError('TemplateFieldNotAllowed', "A layout may not have a 'LayoutTemplate'.");
    }
    for (const [field, value] of [
      ['HtmlBody', htmlBody],
      ['TextBody', textBody],
    ] as const) {
      if (value !== null && (value.match(LAYOUT_CONTENT_PLACEHOLDER) ?? []).length !== 1) {
        throw new DomainError(
          'InvalidLayoutContent',
          `A layout's ${field} must hold the content placeholder {{{ @content }}} exactly once.`,
        );
      }
    }
  } else {
    if (subject === null) throw new DomainError('TemplateFieldMissing', "The 'Subject' field is required.");
    if (subject.length > TEMPLATE_SUBJECT_MAX_LENGTH) {
      throw new DomainError(
        'TemplateFieldTooLarge',
        `The 'Subject' may be at most ${TEMPLATE_SUBJECT_MAX_LENGTH} characters.`,
      );
    }
    if (layoutTemplate !== null) {
      const layout = findTemplate(state, layoutTemplate);
      if (!layout || layout.templateType !== 'Layout' || /^\d+$/.test(layoutTemplate)) {
        throw layoutNotFound(layoutTemplate);
      }
    }
  }
  for (const [field, value] of [
    ['Subject', subject],
    ['HtmlBody', htmlBody],
    ['TextBody', textBody],
  ] as const) {
    if (value === null) continue;
    const source = templateType === 'Layout' ? withoutContentPlaceholder(value) : value;
    const first = parseTemplate(source).errors[0];
    if (first) {
      throw new DomainError(
        'InvalidTemplateField',
        `The '${field}' has a syntax error at line ${first.line}, character ${first.characterPosition}: ${first.message}`,
      );
    }
  }
}

/** A layout's body with its placeholder blanked (`@content` is not a Mustachio path). */
function withoutContentPlaceholder(body: string): string {
  return body.replace(LAYOUT_CONTENT_PLACEHOLDER, '');
}

function templateTypeOf(input: string | undefined, fallback: TemplateType): TemplateType {
  if (input === undefined) return fallback;
  const type = TEMPLATE_TYPES.find((t) => t.toLowerCase() === input.toLowerCase());
  if (!type) {
    throw new DomainError('InvalidTemplateField', `The 'TemplateType' must be 'Standard' or 'Layout'.`);
  }
  return type;
}

function createTemplate(command: CreateTemplate, state: TemplateLibraryState): TemplateEvent[] {
  const { templateId, ...input } = command.data;
  if (!isTemplateId(templateId) || state.templates.has(templateId) || state.deletedIds.has(templateId)) {
    throw new DomainError('InvalidTemplateId', `invalid or used template id ${JSON.stringify(templateId)}`);
  }
  if (state.templates.size >= MAX_TEMPLATES) {
    throw new DomainError('TooManyTemplates', `An organization may have at most ${MAX_TEMPLATES} templates.`, {
      max: MAX_TEMPLATES,
    });
  }
  const content: TemplateContent = {
    name: input.name ?? '',
    alias: blankToNull(input.alias),
    subject: blankToNull(input.subject),
    htmlBody: blankToNull(input.htmlBody),
    textBody: blankToNull(input.textBody),
    templateType: templateTypeOf(input.templateType, 'Standard'),
    layoutTemplate: blankToNull(input.layoutTemplate),
  };
  checkTemplateContent(content, state, templateId);
  return [
    {
      type: 'TemplateCreated',
      data: { templateId, version: 1, ...content },
      metadata: eventMetadata(command.metadata)(),
    },
  ];
}

function pick<T>(given: T | undefined, current: T): T {
  return given === undefined ? current : given;
}

/** An edit that changes nothing decides nothing (no new version). */
function editTemplate(command: EditTemplate, state: TemplateLibraryState): TemplateEvent[] {
  const { idOrAlias, ...input } = command.data;
  const current = findTemplate(state, idOrAlias);
  if (!current) throw templateNotFound(idOrAlias);
  const content: TemplateContent = {
    name: pick(input.name, current.name),
    alias: input.alias === undefined ? current.alias : blankToNull(input.alias),
    subject: input.subject === undefined ? current.subject : blankToNull(input.subject),
    htmlBody: input.htmlBody === undefined ? current.htmlBody : blankToNull(input.htmlBody),
    textBody: input.textBody === undefined ? current.textBody : blankToNull(input.textBody),
    templateType: templateTypeOf(input.templateType, current.templateType),
    layoutTemplate: input.layoutTemplate === undefined ? current.layoutTemplate : blankToNull(input.layoutTemplate),
  };
  if (content.templateType !== current.templateType && current.templateType === 'Layout') {
    requireLayoutUnused(current, state);
  }
  if (current.templateType === 'Layout' && content.alias !== current.alias) requireLayoutUnused(current, state);
  checkTemplateContent(content, state, current.templateId);
  const same = (Object.keys(content) as (keyof TemplateContent)[]).every((key) => content[key] === current[key]);
  if (same) return [];
  return [
    {
      type: 'TemplateEdited',
      data: { templateId: current.templateId, version: current.version + 1, ...content, createdAt: current.createdAt },
      metadata: eventMetadata(command.metadata)(),
    },
  ];
}

/** A layout named by a standard template may not be deleted, retyped or renamed (1130). */
function requireLayoutUnused(layout: TemplateState, state: TemplateLibraryState): void {
  if (layout.alias === null) return;
  const alias = layout.alias.toLowerCase();
  const users = [...state.templates.values()].filter((t) => t.layoutTemplate?.toLowerCase() === alias);
  if (users.length > 0) {
    throw new DomainError(
      'LayoutInUse',
      `The layout '${layout.alias}' is used by ${users.length} template(s) (${users
        .slice(0, 5)
        .map((t) => t.name)
        .join(', ')}): change them first.`,
    );
  }
}

function deleteTemplate(command: DeleteTemplate, state: TemplateLibraryState): TemplateEvent[] {
  const current = findTemplate(state, command.data.idOrAlias);
  if (!current) throw templateNotFound(command.data.idOrAlias);
  if (current.templateType === 'Layout') requireLayoutUnused(current, state);
  return [
    {
      type: 'TemplateDeleted',
      data: { templateId: current.templateId, version: current.version },
      metadata: eventMetadata(command.metadata)(),
    },
  ];
}

export function decideTemplates(command: TemplateCommand, state: TemplateLibraryState): TemplateEvent[] {
  switch (command.type) {
    case 'CreateTemplate':
      return createTemplate(command, state);
    case 'EditTemplate':
      return editTemplate(command, state);
    case 'DeleteTemplate':
      return deleteTemplate(command, state);
  }
}

// ---- Rendering a template set (a send with a template, the validation) ----

export interface RenderedPart {
  contentIsValid: boolean;
  validationErrors: TemplateSyntaxError[];
  /** null when the part is absent or did not render. */
  renderedContent: string | null;
}

export interface TemplateRendering {
  allContentIsValid: boolean;
  subject: RenderedPart;
  htmlBody: RenderedPart;
  textBody: RenderedPart;
  suggestedTemplateModel: unknown;
}

/** What is rendered: the template's parts, and the layout it sits in (its bodies hold `{{{ @content }}}`). */
export interface TemplateSource {
  subject: string | null;
  htmlBody: string | null;
  textBody: string | null;
  templateType: TemplateType;
  layout: { htmlBody: string | null; textBody: string | null } | null;
}

/** The body with the layout around it (the layout's placeholder replaced by the body), or the body alone. */
function inLayout(body: string, layout: string | null | undefined): string {
  if (layout === null || layout === undefined) return body;
  return layout.replace(LAYOUT_CONTENT_PLACEHOLDER, () => body);
}

/**
 * Renders Subject, HtmlBody (escaped) and TextBody against a model: each part's syntax errors (at their line and
 * character in the part itself), what it renders to, and the model the parts suggest. A render that goes past the
 * limits, or reads a value the wrong way, makes that part invalid with the reason.
 */
export function renderTemplateSet(
  source: TemplateSource,
  model: unknown,
  limits: RenderLimits = DEFAULT_RENDER_LIMITS,
  /** How a source is parsed: the caller may pass a memoized parseTemplate (a parsed template is immutable). */
  parse: (source: string) => ParsedTemplate = parseTemplate,
): TemplateRendering {
  const inferred = new InferredModel();
  const part = (body: string | null, layoutBody: string | null | undefined, escape: boolean): RenderedPart => {
    if (body === null) return { contentIsValid: true, validationErrors: [], renderedContent: null };
    const own = source.templateType === 'Layout' ? withoutContentPlaceholder(body) : body;
    const parsedOwn = parse(own);
    inferred.add(parsedOwn);
    if (source.templateType === 'Layout' && (body.match(LAYOUT_CONTENT_PLACEHOLDER) ?? []).length !== 1) {
      return {
        contentIsValid: false,
        validationErrors: [
          {
            message: 'A layout must hold the content placeholder {{{ @content }}} exactly once.',
            line: 1,
            characterPosition: 1,
          },
        ],
        renderedContent: null,
      };
    }
    if (parsedOwn.errors.length > 0) {
      return { contentIsValid: false, validationErrors: [...parsedOwn.errors], renderedContent: null };
    }
    const whole: ParsedTemplate =
      layoutBody === undefined || layoutBody === null ? parsedOwn : parse(inLayout(body, layoutBody));
    if (whole !== parsedOwn) inferred.add(whole);
    try {
      return {
        contentIsValid: true,
        validationErrors: [],
        renderedContent: renderTemplate(whole, model, { escape, limits }),
      };
    } catch (error) {
      if (!(error instanceof TemplateRenderError)) throw error;
      return {
        contentIsValid: false,
        validationErrors: [{ message: error.message, line: 0, characterPosition: 0 }],
        renderedContent: null,
      };
    }
  };
  const layout = source.templateType === 'Standard' ? source.layout : null;
  const subject = part(source.subject, undefined, false);
  const htmlBody = part(source.htmlBody, layout?.htmlBody, true);
  const textBody = part(source.textBody, layout?.textBody, false);
  return {
    allContentIsValid: subject.contentIsValid && htmlBody.contentIsValid && textBody.contentIsValid,
    subject,
    htmlBody,
    textBody,
    suggestedTemplateModel: inferred.representation(),
  };
}
