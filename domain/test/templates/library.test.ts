import { describe, expect, it } from 'vitest';
import {
  renderTemplateSet,
  templateEventKey,
  templateLibraryDecider,
  type CreateTemplate,
  type DeleteTemplate,
  type EditTemplate,
  type TemplateCommand,
  type TemplateCreated,
  type TemplateEdited,
} from '../../src/templates';
import { DeciderSpecification } from '../decider-spec';
import { CREATED_AT, LATER, ORG, commandMetadata, eventMetadata } from '../accounts/fixtures';

const { given } = DeciderSpecification.for(templateLibraryDecider);

const command = <C extends TemplateCommand>(type: C['type'], data: C['data']): C =>
  ({ type, data, metadata: commandMetadata() }) as C;

const welcome = {
  templateId: 11,
  version: 1,
  name: 'Welcome',
  alias: 'welcome',
  subject: 'Hi {{ name }}',
  htmlBody: '<p>Hi {{ name }}</p>',
  textBody: 'Hi {{ name }}',
  templateType: 'Standard' as const,
  layoutTemplate: null,
};
const layout = {
  templateId: 12,
  version: 1,
  name: 'Basic',
  alias: 'basic',
  subject: null,
  htmlBody: '<html><body>{{{ @content }}}</body></html>',
  textBody: '--\n{{{ @content }}}\n--',
  templateType: 'Layout' as const,
  layoutTemplate: null,
};
const created = (data: TemplateCreated['data'], id = `ev-${data.templateId}`): TemplateCreated => ({
  type: 'TemplateCreated',
  data,
  metadata: eventMetadata(id, CREATED_AT),
});

describe('creating a template', () => {
  it('records version 1 of the whole template', () => {
    given([])
      .when(command<CreateTemplate>('CreateTemplate', { ...welcome, templateType: 'standard' }))
      .then([{ type: 'TemplateCreated', data: welcome, metadata: eventMetadata('event-1', LATER) }]);
  });
  it('refuses an alias another template has, whatever its case', () => {
    given([created(welcome)])
      .when(command<CreateTemplate>('CreateTemplate', { ...welcome, templateId: 13, alias: 'Welcome' }))
      .thenThrows('InvalidTemplateField');
  });
  it('refuses a standard template without a subject (1120)', () => {
    given([])
      .when(command<CreateTemplate>('CreateTemplate', { ...welcome, subject: '' }))
      .thenThrows('TemplateFieldMissing');
  });
  it('refuses a syntax error, naming where it is (1122)', () => {
    given([])
      .when(command<CreateTemplate>('CreateTemplate', { ...welcome, htmlBody: 'a\n {{#x}}' }))
      .thenThrows('InvalidTemplateField', (error) => expect(error.message).toContain('line 2, character 2'));
  });
  it('refuses a layout whose body holds {{{ @content }}} twice (1131)', () => {
    given([])
      .when(command<CreateTemplate>('CreateTemplate', { ...layout, htmlBody: '{{{@content}}}{{{ @content }}}' }))
      .thenThrows('InvalidLayoutContent');
  });
  it('refuses a subject on a layout (1123)', () => {
    given([])
      .when(command<CreateTemplate>('CreateTemplate', { ...layout, subject: 'x' }))
      .thenThrows('TemplateFieldNotAllowed');
  });
  it('refuses a layout that does not exist (1101)', () => {
    given([])
      .when(command<CreateTemplate>('CreateTemplate', { ...welcome, layoutTemplate: 'basic' }))
      .thenThrows('TemplateNotFound');
  });
});

describe('editing a template', () => {
  it('records the next version, keeping what was not given', () => {
    given([created(welcome)])
      .when(command<EditTemplate>('EditTemplate', { idOrAlias: 'WELCOME', subject: 'Hello {{ name }}' }))
      .then([
        {
          type: 'TemplateEdited',
          data: { ...welcome, version: 2, subject: 'Hello {{ name }}', createdAt: CREATED_AT },
          metadata: eventMetadata('event-1', LATER),
        },
      ]);
  });
  it('an edit that changes nothing makes no version', () => {
    given([created(welcome)])
      .when(command<EditTemplate>('EditTemplate', { idOrAlias: '11', name: 'Welcome' }))
      .thenNothingHappened();
  });
});

describe('deleting', () => {
  it('a layout a template uses is refused (1130)', () => {
    given([created(layout), created({ ...welcome, layoutTemplate: 'basic' })])
      .when(command<DeleteTemplate>('DeleteTemplate', { idOrAlias: 'basic' }))
      .thenThrows('LayoutInUse');
  });
  it('records the last version; the id is never given again', () => {
    given([created(welcome)])
      .when(command<DeleteTemplate>('DeleteTemplate', { idOrAlias: 'welcome' }))
      .then([
        { type: 'TemplateDeleted', data: { templateId: 11, version: 1 }, metadata: eventMetadata('event-1', LATER) },
      ]);
    given([
      created(welcome),
      { type: 'TemplateDeleted', data: { templateId: 11, version: 1 }, metadata: eventMetadata('d', LATER) },
    ])
      .when(command<CreateTemplate>('CreateTemplate', welcome))
      .thenThrows('InvalidTemplateId');
  });
  it('a version read after its deletion stays deleted (keys differ, order across them is not kept)', () => {
    const edited: TemplateEdited = {
      type: 'TemplateEdited',
      data: { ...welcome, version: 2, createdAt: CREATED_AT },
      metadata: eventMetadata('e', LATER),
    };
    given([
      { type: 'TemplateDeleted', data: { templateId: 11, version: 2 }, metadata: eventMetadata('d', LATER) },
      edited,
      created(welcome),
    ])
      .when(command<EditTemplate>('EditTemplate', { idOrAlias: '11', name: 'x' }))
      .thenThrows('TemplateNotFound');
    expect(templateEventKey(edited)).toBe(`template/${ORG}/11/2`);
  });
});

describe('rendering a template set', () => {
  it('puts the template inside its layout, escaping the HTML only', () => {
    const rendering = renderTemplateSet(
      { ...welcome, layout: { htmlBody: layout.htmlBody, textBody: layout.textBody } },
      { name: '<Ann>' },
    );
    expect(rendering.allContentIsValid).toBe(true);
    expect(rendering.subject.renderedContent).toBe('Hi <Ann>');
    expect(rendering.htmlBody.renderedContent).toBe('<html><body><p>Hi &lt;Ann&gt;</p></body></html>');
    expect(rendering.textBody.renderedContent).toBe('--\nHi <Ann>\n--');
    expect(rendering.suggestedTemplateModel).toEqual({ name: 'name_Value' });
  });
  it('reports each part’s errors at their position and renders the others', () => {
    const rendering = renderTemplateSet({ ...welcome, htmlBody: '<p>\n{{#each}}</p>', layout: null }, { name: 'A' });
    expect(rendering.allContentIsValid).toBe(false);
    expect(rendering.htmlBody.validationErrors[0]).toMatchObject({ line: 2, characterPosition: 1 });
    expect(rendering.textBody.renderedContent).toBe('Hi A');
  });
});
