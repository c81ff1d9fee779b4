/**
 * Postmark's template language, Mustachio (ActiveCampaign/mustachio, the engine Postmark runs), parsed and rendered
 * the way that engine does it. Handlebars and mustache.js differ from it where users notice, so this is a small
 * parser of its own that keeps each tag's line and character for the validation errors:
 *
 * - `{{ path }}` prints a string, number or boolean (`True` / `False`, as .NET prints them), HTML-escaped where the
 *   caller asks (the HtmlBody); `{{{ path }}}` and `{{& path }}` print it raw. Objects and lists print nothing.
 * - A path is looked up in the current scope only (no walking up to outer scopes, unlike mustache.js); `a.b.c`
 *   descends, `../` climbs one scope (at the root it stays there), `.` is the scope itself. A missing value is null.
 * - `{{#x}}…{{/x}}` renders once, with x as its scope, when x "exists": not null, false, 0, "", an empty list or an
 *   empty object. It never iterates (a list is the scope); `{{#each x}}…{{/each}}` iterates, each item its scope,
 *   and `../../` reaches the scope that holds the list. `{{#each}}` over a value that is not a list is an error.
 * - `{{^x}}…{{/x}}` renders when x does not exist. `{{#x}}a{{^x}}b{{/x}}` is an else: opening a section named as the
 *   innermost open one closes that one first.
 * - `{{! comment }}` renders nothing. No partials, no helpers, no delimiters changes. Whitespace is kept as written.
 *
 * Nothing in a model is ever evaluated: values are read from own properties of plain objects and lists only. A
 * render counts its steps and its output and stops with a RenderLimitError past the limits, so a pathological
 * template (lists nested in lists of a large model) fails clearly instead of holding a worker.
 */

export interface TemplateSyntaxError {
  message: string;
  /** 1-based. */
  line: number;
  /** 1-based, on its line. */
  characterPosition: number;
}

type Node =
  | { kind: 'text'; text: string }
  | { kind: 'value'; path: string; raw: boolean }
  | { kind: 'section'; path: string; inverted: boolean; nodes: Node[] }
  | { kind: 'each'; path: string; nodes: Node[] };

/** A parsed template: what renderTemplate and inferModel read. Parse once, render many times. */
export interface ParsedTemplate {
  readonly nodes: readonly Node[];
  readonly errors: readonly TemplateSyntaxError[];
}

/** Deepest nesting of sections a template may have (the parser and renderer recurse that deep). */
export const MAX_TEMPLATE_NESTING = 64;

const TOKEN = /(\{\{[^{}]+?\}\})|(\{\{\{[^{}]+?\}\}\})/g;
// The paths Mustachio refuses: three dots, a character other than a word character, '.', '/' or '_', a '/' not
// after '..', '..' not followed by '/'.
const INVALID_PATH = /([.]{3,})|([^\p{L}\p{N}_./]+)|((?<![.]{2})[/])|([.]{2,}($|[^/]))/u;
const PATH_ELEMENT = /(\.\.[\\/])|([^.]+)/g;

interface Frame {
  /** An each block (closed by `{{/each}}`), else a section (closed by `{{/path}}`). */
  each: boolean;
  /** Where it was opened (unclosed-scope errors point there). */
  index: number;
  /** The node's list the frame's children go to. */
  nodes: Node[];
  path: string;
}

function locate(lineStarts: number[], index: number): { line: number; characterPosition: number } {
  let low = 0;
  let high = lineStarts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (lineStarts[mid]! <= index) low = mid;
    else high = mid - 1;
  }
  return { line: low + 1, characterPosition: index - lineStarts[low]! + 1 };
}

/** Parses a template; every syntax error is collected (with its position), none thrown. */
export function parseTemplate(source: string): ParsedTemplate {
  const lineStarts = [0];
  for (let i = 0; i < source.length; i++) if (source.charCodeAt(i) === 10) lineStarts.push(i + 1);
  const errors: TemplateSyntaxError[] = [];
  const error = (index: number, message: string) => errors.push({ message, ...locate(lineStarts, index) });
  const validated = (path: string, index: number): string => {
    if (INVALID_PATH.test(path)) {
      error(index, `The path '${path}' is not valid. Please see documentation for examples of valid paths.`);
    }
    return path;
  };

  const root: Node[] = [];
  const stack: Frame[] = [];
  const current = () => (stack.length > 0 ? stack[stack.length - 1]!.nodes : root);
  const open = (node: Extract<Node, { nodes: Node[] }>, index: number) => {
    current().push(node);
    if (stack.length >= MAX_TEMPLATE_NESTING) {
      error(index, `Sections may be nested at most ${MAX_TEMPLATE_NESTING} deep.`);
    }
    stack.push({ each: node.kind === 'each', index, nodes: node.nodes, path: node.path });
  };

  let at = 0;
  for (const match of source.matchAll(TOKEN)) {
    const tag = match[0];
    const index = match.index;
    if (index > at) current().push({ kind: 'text', text: source.slice(at, index) });
    at = index + tag.length;
    const inner = tag.replace(/^\{+/, '').replace(/\}+$/, '');
    const body = inner.trim();
    if (tag.startsWith('{{#each')) {
      const path = inner.replace(/^#/, '').trim().slice(4);
      if (path.startsWith(' ') && path.trim() !== '') {
        open({ kind: 'each', path: validated(path.trim(), index), nodes: [] }, index);
      } else {
        error(
          index,
          "The 'each' block being opened requires a model path to be specified in the form '{{#each <name>}}'.",
        );
      }
    } else if (tag.startsWith('{{/each')) {
      if (tag !== '{{/each}}') error(index, "The syntax to close the 'each' block should be: '{{/each}}'.");
      else if (stack[stack.length - 1]?.each) stack.pop();
      else {
        error(
          index,
          "An 'each' block is being closed, but no corresponding opening element ('{{#each <name>}}') was detected.",
        );
      }
    } else if (tag.startsWith('{{#') || tag.startsWith('{{^')) {
      const inverted = tag.startsWith('{{^');
      const path = validated(body.slice(1).trim(), index);
      const top = stack[stack.length - 1];
      // An else: a section named as the innermost open one closes it first.
      if (top && !top.each && top.path === path) stack.pop();
      open({ kind: 'section', path, inverted, nodes: [] }, index);
    } else if (tag.startsWith('{{/')) {
      const path = validated(body.slice(1).trim(), index);
      const top = stack[stack.length - 1];
      if (top && !top.each && top.path === path) stack.pop();
      else error(index, 'It appears that open and closing elements are mismatched.');
    } else if (tag.startsWith('{{{') || tag.startsWith('{{&')) {
      current().push({ kind: 'value', path: validated(body.replace(/^&/, '').trim(), index), raw: true });
    } else if (tag.startsWith('{{!')) {
      // A comment renders nothing.
    } else {
      current().push({ kind: 'value', path: validated(body, index), raw: false });
    }
  }
  if (at < source.length) current().push({ kind: 'text', text: source.slice(at) });
  for (const frame of stack) {
    error(
      frame.index,
      `A scope block to the following path was opened but not closed: '${frame.path}', please close it using the appropriate syntax.`,
    );
  }
  errors.sort((a, b) => a.line - b.line || a.characterPosition - b.characterPosition);
  return { nodes: root, errors };
}

// ---- Rendering ----

/** What bounds a render: steps (tags and text pieces visited) and characters of output. */
export interface RenderLimits {
  maxSteps: number;
  maxOutputLength: number;
}

/** Enough for a large newsletter: a million steps, 5 MB of output. */
export const DEFAULT_RENDER_LIMITS: RenderLimits = { maxSteps: 1_000_000, maxOutputLength: 5 * 1024 * 1024 };

/** A render went past its limits, or used a value the wrong way; the message says which. */
export class TemplateRenderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateRenderError';
  }
}

interface Scope {
  value: unknown;
  parent: Scope | null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function pathElements(path: string): string[] {
  return [...path.matchAll(PATH_ELEMENT)].map((m) => m[0]);
}

function resolve(scope: Scope, elements: readonly string[], from = 0): Scope {
  if (from >= elements.length) return scope;
  const element = elements[from]!;
  if (element.startsWith('..')) return resolve(scope.parent ?? scope, elements, from + 1);
  const value = isPlainObject(scope.value) && Object.hasOwn(scope.value, element) ? scope.value[element] : undefined;
  return resolve({ value: value ?? null, parent: scope }, elements, from + 1);
}

/** Mustachio's truth: null, false, 0, "", an empty list and an empty object do not exist. */
export function valueExists(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isPlainObject(value)) return Object.keys(value).length > 0;
  return true;
}

function printable(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return '';
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/**
 * Renders a parsed template (without syntax errors) against a model. `escape`: HTML-escape `{{ }}` values (the
 * HtmlBody). Throws TemplateRenderError past the limits or for an each over a value that is not a list.
 */
export function renderTemplate(
  template: ParsedTemplate,
  model: unknown,
  options: { escape: boolean; limits?: RenderLimits },
): string {
  const limits = options.limits ?? DEFAULT_RENDER_LIMITS;
  let steps = 0;
  let length = 0;
  const out: string[] = [];
  const emit = (text: string) => {
    length += text.length;
    if (length > limits.maxOutputLength) {
      throw new TemplateRenderError(
        `The rendered content is longer than ${limits.maxOutputLength} characters, the most a template may render.`,
      );
    }
    out.push(text);
  };
  const walk = (nodes: readonly Node[], scope: Scope) => {
    for (const node of nodes) {
      if (++steps > limits.maxSteps) {
        throw new TemplateRenderError(
          `Rendering took more than ${limits.maxSteps} steps, the most a template may take (lists within lists of a large model?).`,
        );
      }
      switch (node.kind) {
        case 'text':
          emit(node.text);
          break;
        case 'value': {
          const text = printable(resolve(scope, pathElements(node.path)).value);
          emit(options.escape && !node.raw ? escapeHtml(text) : text);
          break;
        }
        case 'section': {
          const inner = resolve(scope, pathElements(node.path));
          if (valueExists(inner.value) !== node.inverted) walk(node.nodes, inner);
          break;
        }
        case 'each': {
          const list = resolve(scope, pathElements(node.path));
          if (!valueExists(list.value)) break;
          if (!Array.isArray(list.value)) {
            throw new TemplateRenderError(
              `'${node.path}' is used like an array by the template, but is a scalar value or object in your model.`,
            );
          }
          for (const item of list.value as unknown[]) walk(node.nodes, { value: item ?? null, parent: list });
          break;
        }
      }
    }
  };
  walk(template.nodes, { value: model ?? null, parent: null });
  return out.join('');
}

// ---- The model a template expects (Postmark's SuggestedTemplateModel) ----

type Usage = 'scalar' | 'conditional' | 'collection';

/** What the template reads, as Mustachio infers it; one per template set (Subject, HtmlBody and TextBody share one). */
export class InferredModel {
  private readonly children = new Map<string, InferredModel>();
  private readonly usages = new Set<Usage>();

  constructor(
    private readonly key = '',
    private readonly parent: InferredModel | null = null,
  ) {}

  /** Records every path the template uses, with how it uses it. */
  add(template: ParsedTemplate): this {
    this.visit(template.nodes);
    return this;
  }

  private visit(nodes: readonly Node[]): void {
    for (const node of nodes) {
      if (node.kind === 'value') this.at(node.path).usages.add('scalar');
      else if (node.kind === 'section') {
        const inner = this.at(node.path);
        inner.usages.add('conditional');
        inner.visit(node.nodes);
      } else if (node.kind === 'each') {
        const inner = this.at(node.path);
        inner.usages.add('collection');
        inner.visit(node.nodes);
      }
    }
  }

  private at(path: string): InferredModel {
    return pathElements(path).reduce<InferredModel>((model, element) => model.step(element), this);
  }

  private step(element: string): InferredModel {
    if (element.startsWith('..')) return this.parent ?? this;
    let child = this.children.get(element);
    if (!child) {
      child = new InferredModel(element, this);
      this.children.set(element, child);
    }
    return child;
  }

  /** A sample model: `name_Value` for a printed value, a list of one object (or of three samples) for an each. */
  representation(): unknown {
    const children = () => Object.fromEntries([...this.children].map(([key, child]) => [key, child.representation()]));
    if (this.usages.size === 0) return children();
    if (this.usages.has('scalar') && this.usages.size === 1) return `${this.key}_Value`;
    if (this.usages.has('collection')) {
      return this.children.size > 0 ? [children()] : [1, 2, 3].map((n) => `${this.key}_${n}`);
    }
    return children();
  }
}
