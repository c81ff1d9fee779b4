/**
 * Templates through the official `postmark` 5.1.0 client, against the real services: every template method, the
 * Postmark error codes, layouts, escaping, versions, a send with a template through the send use case (its
 * MessageAccepted carries the rendered content and the template's id and version), test keys, and one
 * organization never reaching another's templates.
 */
import { randomUUID } from 'node:crypto';
import * as postmark from 'postmark';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageAcceptedData } from '@sendline/domain';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { eventsOfMessage } from '../support/events';

let api: TestApi;
let org: TestOrganization;
let other: TestOrganization;
let client: postmark.ServerClient;
let otherClient: postmark.ServerClient;

const clientFor = (key: string) =>
  new postmark.ServerClient(key, { requestHost: api.baseUrl.replace(/^http:\/\//, ''), useHttps: false });
const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

async function call(method: string, path: string, key: string, body?: unknown) {
  const response = await fetch(`${api.baseUrl}${path}`, {
    method,
    headers: { 'X-Postmark-Server-Token': key, Accept: 'application/json', 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function errorOf(promise: Promise<unknown>): Promise<{ code: number; statusCode: number; message: string }> {
  const error = (await promise.then(
    () => null,
    (e: unknown) => e,
  )) as { code: number; statusCode: number; message: string } | null;
  if (!error) throw new Error('expected the call to fail');
  return error;
}

beforeAll(async () => {
  api = await startTestApi();
  org = await createTestOrganization(api.deps);
  other = await createTestOrganization(api.deps);
  client = clientFor(org.liveKey);
  otherClient = clientFor(other.liveKey);
});
afterAll(async () => {
  await api?.close();
});

describe('the template methods of postmark 5.1.0', () => {
  it('createTemplate, getTemplate, editTemplate, getTemplates, deleteTemplate', async () => {
    const alias = unique('welcome');
    const created = await client.createTemplate({
      Name: 'Welcome',
      Alias: alias,
      Subject: 'Hi {{ name }}',
      HtmlBody: '<p>Hi {{ name }}</p>',
      TextBody: 'Hi {{ name }}',
    });
    expect(created).toMatchObject({ Name: 'Welcome', Alias: alias, Active: true, TemplateType: 'Standard' });
    expect(created.TemplateId).toBeGreaterThan(0);

    const byId = await client.getTemplate(created.TemplateId);
    expect(byId).toMatchObject({ TemplateId: created.TemplateId, Subject: 'Hi {{ name }}', LayoutTemplate: null });
    expect((await client.getTemplate(alias)).TemplateId).toBe(created.TemplateId);

    const edited = await client.editTemplate(alias, { Subject: 'Hello {{ name }}' });
    expect(edited.TemplateId).toBe(created.TemplateId);
    expect((await client.getTemplate(created.TemplateId)).Subject).toBe('Hello {{ name }}');

    const list = await client.getTemplates({ count: 100, offset: 0 });
    expect(list.Templates.map((t) => t.TemplateId)).toContain(created.TemplateId);
    expect(list.TotalCount).toBe(list.Templates.length);

    const versions = await call('GET', `/templates/${alias}/versions`, org.liveKey);
    expect(versions.body.TotalCount).toBe(2);
    expect(
      (versions.body.Versions as { Version: number; Subject: string }[]).map((v) => [v.Version, v.Subject]),
    ).toEqual([
      [2, 'Hello {{ name }}'],
      [1, 'Hi {{ name }}'],
    ]);

    const deleted = await client.deleteTemplate(alias);
    expect(deleted.ErrorCode).toBe(0);
    // The console's audit names each change and who made it (the key's prefix, never the key).
    const { entries } = await api.deps.accounts.audit(org.organizationId, 100, 0);
    const ours = entries.filter((e) => e.subject.startsWith(`template ${created.TemplateId} `));
    expect(ours.map((e) => e.action)).toEqual(['TemplateDeleted', 'TemplateEdited', 'TemplateCreated']);
    expect(ours[0]?.actor).toBe(`api key ${org.liveKey.slice(0, 12)}`);
    expect((await errorOf(client.getTemplate(created.TemplateId))).code).toBe(1101);
  });

  it('validateTemplate renders each part, reports errors at their position and suggests a model', async () => {
    const result = await client.validateTemplate({
      Subject: 'Order {{ order.id }}',
      HtmlBody: '<style>p { color: red }</style><p>{{ name }}</p>{{#each items}}<li>{{ title }}</li>{{/each}}',
      TextBody: 'Hi\n  {{#missing}}',
      TestRenderModel: { name: '<Ann>', order: { id: 7 }, items: [{ title: 'Tea' }] },
    });
    expect(result.AllContentIsValid).toBe(false);
    expect(result.Subject.RenderedContent).toBe('Order 7');
    expect(result.HtmlBody.ContentIsValid).toBe(true);
    expect(result.HtmlBody.RenderedContent).toContain('<p style="color: red;">&lt;Ann&gt;</p>');
    expect(result.TextBody.ContentIsValid).toBe(false);
    expect(result.TextBody.ValidationErrors).toEqual([
      {
        Message:
          "A scope block to the following path was opened but not closed: 'missing', please close it using the appropriate syntax.",
        Line: 2,
        CharacterPosition: 3,
      },
    ]);
    expect(result.SuggestedTemplateModel).toMatchObject({
      name: 'name_Value',
      order: { id: 'id_Value' },
      items: [{ title: 'title_Value' }],
    });
  });

  it('sendEmailWithTemplate: a layout around the template, CSS inlined, the model escaped in HTML only', async () => {
    const layout = unique('layout');
    await client.createTemplate({
      Name: 'Layout',
      Alias: layout,
      TemplateType: postmark.Models.TemplateTypes.Layout,
      HtmlBody:
        '<html><head><style>.box { color: #123456 }</style></head><body><div class="box">{{{ @content }}}</div></body></html>',
      TextBody: '== {{{ @content }}} ==',
    });
    const alias = unique('receipt');
    const template = await client.createTemplate({
      Name: 'Receipt',
      Alias: alias,
      Subject: 'Receipt for {{ name }}',
      HtmlBody: '<p>{{ name }} paid {{{ amount }}}</p>',
      TextBody: '{{ name }} paid {{ amount }}',
      LayoutTemplate: layout,
    });
    const layouts = await client.getTemplates({
      count: 100,
      offset: 0,
      templateType: postmark.Models.TemplateTypes.Layout,
    });
    expect(layouts.Templates.map((t) => t.Alias)).toContain(layout);
    expect(layouts.Templates.every((t) => t.TemplateType === 'Layout')).toBe(true);
    const inLayout = await client.getTemplates({ count: 100, offset: 0, layoutTemplate: layout });
    expect(inLayout.Templates.map((t) => t.TemplateId)).toEqual([template.TemplateId]);
    const result = await client.sendEmailWithTemplate({
      From: `Shop <shop@${org.domain}>`,
      To: 'buyer@example.net',
      TemplateAlias: alias,
      TemplateModel: { name: 'Tom & <Jerry>', amount: '<b>$5</b>' },
    });
    expect(result.ErrorCode).toBe(0);
    expect(result.To).toBe('buyer@example.net');
    const [accepted] = await eventsOfMessage(api.deps.store, result.MessageID);
    const data = accepted?.data as MessageAcceptedData;
    expect(data.subject).toBe('Receipt for Tom & <Jerry>');
    expect(data.htmlBody).toContain(
      '<div class="box" style="color: #123456;"><p>Tom &amp; &lt;Jerry&gt; paid <b>$5</b></p></div>',
    );
    expect(data.htmlBody).not.toContain('<style>');
    expect(data.textBody).toBe('== Tom & <Jerry> paid <b>$5</b> ==');
    expect(data.template).toEqual({ templateId: template.TemplateId, version: 1 });
  });

  it('sendEmailBatchWithTemplates: one result per message, in order, each with its own error', async () => {
    const alias = unique('note');
    await client.createTemplate({ Name: 'Note', Alias: alias, Subject: 'Note', TextBody: 'Hi {{ name }}' });
    const results = await client.sendEmailBatchWithTemplates([
      { From: `s@${org.domain}`, To: 'one@example.net', TemplateAlias: alias, TemplateModel: { name: 'A' } },
      { From: `s@${org.domain}`, To: 'two@example.net', TemplateAlias: unique('nope'), TemplateModel: {} },
      { From: `s@${org.domain}`, To: 'three@example.net', TemplateAlias: alias } as postmark.Models.TemplatedMessage,
      { From: `s@${org.domain}`, To: 'bad address', TemplateAlias: alias, TemplateModel: {} },
    ]);
    expect(results.map((r) => r.ErrorCode)).toEqual([0, 1101, 1109, 300]);
    expect(results[0]?.To).toBe('one@example.net');
  });
});

describe("Postmark's template error codes", () => {
  it('1120 a required field, 1122 a syntax error or a taken alias, 1123 a subject on a layout, 1131 @content twice', async () => {
    expect((await errorOf(client.createTemplate({ Name: 'x', HtmlBody: 'x' }))).code).toBe(1120);
    const syntax = await errorOf(client.createTemplate({ Name: 'x', Subject: 's', HtmlBody: 'a\n{{#x}}' }));
    expect([syntax.code, syntax.statusCode]).toEqual([1122, 422]);
    expect(syntax.message).toContain('line 2, character 1');
    const alias = unique('taken');
    await client.createTemplate({ Name: 'x', Alias: alias, Subject: 's', TextBody: 't' });
    expect(
      (await errorOf(client.createTemplate({ Name: 'y', Alias: alias.toUpperCase(), Subject: 's', TextBody: 't' })))
        .code,
    ).toBe(1122);
    const layout = { Name: 'L', TemplateType: postmark.Models.TemplateTypes.Layout };
    expect((await errorOf(client.createTemplate({ ...layout, Subject: 's', HtmlBody: '{{{ @content }}}' }))).code).toBe(
      1123,
    );
    expect((await errorOf(client.createTemplate({ ...layout, HtmlBody: '{{{ @content }}}{{{@content}}}' }))).code).toBe(
      1131,
    );
    expect((await errorOf(client.createTemplate({ ...layout, HtmlBody: 'no placeholder' }))).code).toBe(1131);
  });

  it('1101 an unknown layout, 1130 a layout in use may not be deleted', async () => {
    expect(
      (await errorOf(client.createTemplate({ Name: 'x', Subject: 's', TextBody: 't', LayoutTemplate: unique('none') })))
        .code,
    ).toBe(1101);
    const layout = unique('used');
    await client.createTemplate({
      Name: 'L',
      Alias: layout,
      TemplateType: postmark.Models.TemplateTypes.Layout,
      TextBody: '{{{ @content }}}',
    });
    const user = await client.createTemplate({ Name: 'U', Subject: 's', TextBody: 't', LayoutTemplate: layout });
    expect((await errorOf(client.deleteTemplate(layout))).code).toBe(1130);
    await client.editTemplate(user.TemplateId, { LayoutTemplate: '' });
    expect((await client.deleteTemplate(layout)).ErrorCode).toBe(0);
  });

  it('1123 a send with a template that also gives a Subject; a layout is not sent', async () => {
    const alias = unique('plain');
    await client.createTemplate({ Name: 'P', Alias: alias, Subject: 's', TextBody: 't' });
    const answer = await call('POST', '/email/withTemplate', org.liveKey, {
      From: `s@${org.domain}`,
      To: 'x@example.net',
      TemplateAlias: alias,
      TemplateModel: {},
      Subject: 'mine',
    });
    expect([answer.status, answer.body.ErrorCode]).toEqual([422, 1123]);
  });

  it('a pathological template fails within the limit, with a clear error', async () => {
    const alias = unique('heavy');
    await client.createTemplate({
      Name: 'Heavy',
      Alias: alias,
      Subject: 's',
      TextBody: '{{#each a}}{{#each b}}{{#each c}}{{#each d}}x{{/each}}{{/each}}{{/each}}{{/each}}',
    });
    const list = Array.from({ length: 40 }, () => 1);
    const d = { d: list };
    const c = { c: list.map(() => d) };
    const b = { b: list.map(() => c) };
    const failure = await errorOf(
      client.sendEmailWithTemplate({
        From: `s@${org.domain}`,
        To: 'x@example.net',
        TemplateAlias: alias,
        TemplateModel: { a: list.map(() => b) },
      }),
    );
    expect(failure.code).toBe(1122);
    expect(failure.message).toMatch(/more than 1000000 steps/);
  });
});

describe('scopes, test keys and organizations', () => {
  it('a key without templates:manage may not change templates (403)', async () => {
    const reader = await org.issueKey(['templates:read']);
    expect((await call('POST', '/templates', reader.token, { Name: 'x', Subject: 's', TextBody: 't' })).status).toBe(
      403,
    );
    expect((await call('GET', '/templates', reader.token)).status).toBe(200);
    const sender = await org.issueKey(['email:send']);
    expect((await call('GET', '/templates', sender.token)).status).toBe(403);
  });

  it('a test key checks a send with a template and appends nothing', async () => {
    const alias = unique('testkey');
    await client.createTemplate({ Name: 'T', Alias: alias, Subject: 's', TextBody: 'Hi {{ name }}' });
    const result = await clientFor(org.testKey).sendEmailWithTemplate({
      From: `s@${org.domain}`,
      To: 'x@example.net',
      TemplateAlias: alias,
      TemplateModel: { name: 'A' },
    });
    expect(result.Message).toBe('Test job accepted');
    expect(result.MessageID).toMatch(/^[0-9a-f-]{36}$/);
    // A live send appends before it answers: nothing appended by now is nothing at all.
    expect(await eventsOfMessage(api.deps.store, result.MessageID)).toEqual([]);
  });

  it('one organization cannot read, use, change or delete another’s template, by id or by alias', async () => {
    const alias = unique('mine');
    const mine = await client.createTemplate({ Name: 'Mine', Alias: alias, Subject: 's', TextBody: 't' });
    for (const idOrAlias of [mine.TemplateId, alias]) {
      expect((await errorOf(otherClient.getTemplate(idOrAlias))).code).toBe(1101);
      expect((await errorOf(otherClient.editTemplate(idOrAlias, { Subject: 'theirs' }))).code).toBe(1101);
      expect((await errorOf(otherClient.deleteTemplate(idOrAlias))).code).toBe(1101);
    }
    for (const named of [{ TemplateId: mine.TemplateId }, { TemplateAlias: alias }]) {
      const send = await errorOf(
        otherClient.sendEmailWithTemplate({
          From: `s@${other.domain}`,
          To: 'x@example.net',
          ...named,
          TemplateModel: {},
        }),
      );
      expect(send.code).toBe(1101);
    }
    expect(
      (await otherClient.getTemplates({ count: 100, offset: 0 })).Templates.map((t) => t.TemplateId),
    ).not.toContain(mine.TemplateId);
    expect((await client.getTemplate(alias)).Subject).toBe('s');
  });
});
