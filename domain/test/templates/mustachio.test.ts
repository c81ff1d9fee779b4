import { describe, expect, it } from 'vitest';
import {
  InferredModel,
  parseTemplate,
  renderTemplate,
  TemplateRenderError,
  valueExists,
} from '../../src/templates/mustachio';

const render = (source: string, model: unknown, escape = true) => {
  const parsed = parseTemplate(source);
  expect(parsed.errors).toEqual([]);
  return renderTemplate(parsed, model, { escape });
};

describe('Mustachio rendering, as Postmark renders it', () => {
  it.each([
    [
      'a value, HTML-escaped in an HTML body',
      '{{ name }}',
      { name: '<b>"Tom" & \'Jo\'</b>' },
      true,
      '&lt;b&gt;&quot;Tom&quot; &amp; &#39;Jo&#39;&lt;/b&gt;',
    ],
    ['a value, not escaped in a subject or text body', '{{ name }}', { name: '<b>&</b>' }, false, '<b>&</b>'],
    ['a triple-brace value raw in HTML', '{{{ name }}}', { name: '<b>&</b>' }, true, '<b>&</b>'],
    ['an ampersand value raw in HTML', '{{& name }}', { name: '<b>&</b>' }, true, '<b>&</b>'],
    ['a dotted path', '{{ a.b.c }}', { a: { b: { c: 'deep' } } }, true, 'deep'],
    ['a missing value prints nothing', '[{{ nope }}][{{ a.nope.deeper }}]', { a: {} }, true, '[][]'],
    ['numbers print as written', '{{ n }}/{{ f }}', { n: 42, f: 1.5 }, true, '42/1.5'],
    ['booleans print as .NET prints them', '{{ yes }}/{{ no }}', { yes: true, no: false }, true, 'True/False'],
    ['objects and lists print nothing', '[{{ o }}][{{ l }}]', { o: { a: 1 }, l: [1] }, true, '[][]'],
    ['a section is a scope', '{{#user}}{{ name }}{{/user}}', { user: { name: 'Ann' } }, true, 'Ann'],
    [
      'a section does not see outer values',
      '{{#user}}[{{ title }}]{{/user}}',
      { title: 'T', user: { name: 'A' } },
      true,
      '[]',
    ],
    [
      '../ climbs one scope',
      '{{#user}}{{ ../title }} {{ name }}{{/user}}',
      { title: 'Dr', user: { name: 'A' } },
      true,
      'Dr A',
    ],
    ['../ at the root stays at the root', '{{ ../../title }}', { title: 'T' }, true, 'T'],
    [
      'an inverted section climbs from its missing value',
      '{{^gone}}{{ ../title }}{{/gone}}',
      { title: 'T' },
      true,
      'T',
    ],
    ['a section over a list renders once, not per item', '{{#list}}x{{/list}}', { list: [1, 2, 3] }, true, 'x'],
    [
      'each iterates, {{.}} is the item (escaped)',
      '{{#each list}}[{{.}}]{{/each}}',
      { list: ['a', '<b>'] },
      true,
      '[a][&lt;b&gt;]',
    ],
    [
      'each item is a scope',
      '{{#each people}}{{ name }};{{/each}}',
      { people: [{ name: 'A' }, { name: 'B' }] },
      true,
      'A;B;',
    ],
    [
      '../../ from an item reaches the list holder',
      '{{#each c.items}}{{ name }}@{{ ../../owner }} {{/each}}',
      { c: { owner: 'O', items: [{ name: 'x' }] } },
      true,
      'x@O ',
    ],
    ['each over an empty list renders nothing', '[{{#each l}}x{{/each}}]', { l: [] }, true, '[]'],
    ['a comment renders nothing', 'a{{! a note }}b', {}, true, 'ab'],
    ['a section reopened under its own name is an else', '{{#ok}}yes{{^ok}}no{{/ok}}', { ok: false }, true, 'no'],
    ['whitespace and newlines are kept as written', '  {{#a}}\n  x\n  {{/a}}\n', { a: true }, true, '  \n  x\n  \n'],
    ['a lone brace pair is text', 'a {{ b', { b: 1 }, true, 'a {{ b'],
    ['{{.}} at the root is the model, printed only when printable', '{{.}}', 'text', true, 'text'],
    ['a prototype property is never read', '[{{ constructor }}][{{#toString}}x{{/toString}}]', {}, true, '[][]'],
  ])('%s', (_, source, model, escape, expected) => {
    expect(render(source, model, escape)).toBe(expected);
  });

  describe('sections test the truth of their value', () => {
    it.each([null, false, 0, '', [], {}, undefined])('%j is false', (value) => {
      expect(render('{{#v}}shown{{/v}}{{^v}}hidden{{/v}}', { v: value })).toBe('hidden');
      expect(valueExists(value)).toBe(false);
    });
    it.each([true, 1, -1, 'x', '0', 'false', [0], { a: null }])('%j is true', (value) => {
      expect(render('{{#v}}shown{{/v}}{{^v}}hidden{{/v}}', { v: value })).toBe('shown');
    });
  });

  it('each over a value that is not a list is a clear error', () => {
    expect(() => render('{{#each v}}x{{/each}}', { v: { a: 1 } })).toThrow(
      "'v' is used like an array by the template, but is a scalar value or object in your model.",
    );
  });
});

describe('syntax errors, at their line and character', () => {
  it.each([
    [
      'an unclosed section',
      'Hi\n  {{#user}}x',
      [
        [
          2,
          3,
          "A scope block to the following path was opened but not closed: 'user', please close it using the appropriate syntax.",
        ],
      ],
    ],
    [
      'a mismatched close',
      '{{#a}}x{{/b}}{{/a}}',
      [[1, 8, 'It appears that open and closing elements are mismatched.']],
    ],
    [
      'an each without a path',
      'x\n{{#each}}{{/each}}',
      [
        [2, 1, "The 'each' block being opened requires a model path to be specified in the form '{{#each <name>}}'."],
        [
          2,
          10,
          "An 'each' block is being closed, but no corresponding opening element ('{{#each <name>}}') was detected.",
        ],
      ],
    ],
    [
      'an each closed with a path',
      '{{#each l}}x{{/each l}}',
      [
        [
          1,
          1,
          "A scope block to the following path was opened but not closed: 'l', please close it using the appropriate syntax.",
        ],
        [1, 13, "The syntax to close the 'each' block should be: '{{/each}}'."],
      ],
    ],
    [
      'a path with a space',
      '{{ first name }}',
      [[1, 1, "The path 'first name' is not valid. Please see documentation for examples of valid paths."]],
    ],
    [
      'a path with three dots',
      '{{ a...b }}',
      [[1, 1, "The path 'a...b' is not valid. Please see documentation for examples of valid paths."]],
    ],
    [
      'a helper (Handlebars) is not a path',
      '{{#if x}}y{{/if x}}',
      [
        [1, 1, "The path 'if x' is not valid. Please see documentation for examples of valid paths."],
        [1, 11, "The path 'if x' is not valid. Please see documentation for examples of valid paths."],
      ],
    ],
  ])('%s', (_, source, expected) => {
    expect(parseTemplate(source).errors.map((e) => [e.line, e.characterPosition, e.message])).toEqual(expected);
  });
});

describe('limits: a pathological template fails clearly', () => {
  it('stops past its steps (lists within lists of a large model)', () => {
    const list = Array.from({ length: 200 }, () => 1);
    const model = { a: list.map(() => ({ b: list.map(() => ({ c: list })) })) };
    const parsed = parseTemplate('{{#each a}}{{#each b}}{{#each c}}x{{/each}}{{/each}}{{/each}}');
    expect(() =>
      renderTemplate(parsed, model, { escape: true, limits: { maxSteps: 100_000, maxOutputLength: 1e9 } }),
    ).toThrow(TemplateRenderError);
  });
  it('stops past its output length', () => {
    const parsed = parseTemplate('{{#each a}}{{ s }}{{/each}}');
    const model = { a: Array.from({ length: 100 }, () => ({ s: 'x'.repeat(1000) })) };
    expect(() =>
      renderTemplate(parsed, model, { escape: true, limits: { maxSteps: 1e9, maxOutputLength: 50_000 } }),
    ).toThrow(/longer than 50000 characters/);
  });
  it('refuses sections nested deeper than it renders', () => {
    const names = Array.from({ length: 70 }, (_, i) => `a${i}`);
    const source =
      names.map((n) => `{{#${n}}}`).join('') +
      names
        .reverse()
        .map((n) => `{{/${n}}}`)
        .join('');
    expect(parseTemplate(source).errors[0]?.message).toMatch(/nested at most 64 deep/);
  });
});

describe('the model a template suggests (SuggestedTemplateModel)', () => {
  it('names each printed value, lists for each blocks, objects for sections', () => {
    const model = new InferredModel()
      .add(parseTemplate('Hi {{ name }}'))
      .add(
        parseTemplate(
          '{{#company}}{{ company_name }}{{/company}}{{#each products}}{{ title }}{{/each}}{{#each tags}}{{.}}{{/each}}',
        ),
      )
      .representation();
    expect(model).toEqual({
      name: 'name_Value',
      company: { company_name: 'company_name_Value' },
      products: [{ title: 'title_Value' }],
      tags: ['tags_1', 'tags_2', 'tags_3'],
    });
  });
});
