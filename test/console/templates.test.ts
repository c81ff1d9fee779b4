import { randomUUID } from 'node:crypto';
import type { Role } from '@sendline/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestOrganization,
  ensureTestSystemOrganization,
  startTestApi,
  type TestApi,
  type TestOrganization,
} from '../support/api';
import { call } from '../support/http';
import { ConsoleClient, openSignInMailbox, originOf, testConsoleServices, type SignInMailbox } from './support';

/**
 * The Templates page's endpoints (issue 36) without a browser: the public API's answers for a member's own
 * organization only (another organization's template is 1101 by id and by alias, as an unknown one), the role rules
 * (developers change and send tests; viewers read and preview), and "send a test" going to the signed-in member's
 * own address whatever the request says.
 */

let api: TestApi;
let mailbox: SignInMailbox;
let a: TestOrganization;
let b: TestOrganization;
const members = {} as Record<'developerA' | 'viewerA' | 'adminB', { email: string; client: ConsoleClient }>;

async function signIn(org: TestOrganization, role: Role): Promise<{ email: string; client: ConsoleClient }> {
  const email = `${role}-${randomUUID().slice(0, 8)}@example.net`;
  await org.service.addMember(org.organizationId, email, role);
  const seen = mailbox.countFor(email);
  const client = new ConsoleClient(originOf(api.baseUrl));
  expect((await client.post('/sign-in/link', { email })).status).toBe(200);
  expect((await client.signInWith(await mailbox.tokenFor(email, seen))).status).toBe(200);
  return { email, client };
}

beforeAll(async () => {
  api = await startTestApi((deps) => ({ console: testConsoleServices(deps) }));
  await ensureTestSystemOrganization(api.deps);
  [a, b] = await Promise.all([createTestOrganization(api.deps), createTestOrganization(api.deps)]);
  mailbox = await openSignInMailbox(api.deps.store);
  members.developerA = await signIn(a, 'developer');
  members.viewerA = await signIn(a, 'viewer');
  members.adminB = await signIn(b, 'admin');
});
afterAll(async () => {
  await mailbox?.close();
  await api?.close();
});

describe('the console’s templates', () => {
  let templateId = 0;
  const alias = `welcome-${randomUUID().slice(0, 6)}`;

  it('lets a developer create and edit a template, listed with its last version, the same as the public API', async () => {
    const developer = members.developerA.client;
    const created = await developer.post('/templates', {
      Name: 'Welcome',
      Alias: alias,
      Subject: 'Hi {{ name }}',
      TextBody: 'Hello {{ name }}',
    });
    expect(created.status).toBe(200);
    templateId = created.body.TemplateId;
    expect((await developer.put(`/templates/${alias}`, { Subject: 'Welcome, {{ name }}' })).status).toBe(200);

    const listed = await developer.get('/templates');
    expect(listed.body.Templates).toContainEqual(
      expect.objectContaining({ TemplateId: templateId, Alias: alias, Active: true, Version: 2 }),
    );
    const versions = await developer.get(`/templates/${templateId}/versions`);
    expect(versions.body.Versions.map((v: { Subject: string }) => v.Subject)).toEqual([
      'Welcome, {{ name }}',
      'Hi {{ name }}',
    ]);
    // The public API sees the very same template.
    const viaKey = await call(api.baseUrl, 'GET', `/templates/${alias}`, { key: a.liveKey });
    expect(viaKey.body).toMatchObject({ TemplateId: templateId, Subject: 'Welcome, {{ name }}', Version: 2 });
  });

  it('lets a viewer read and preview, and refuses them every change', async () => {
    const viewer = members.viewerA.client;
    expect((await viewer.get(`/templates/${alias}`)).status).toBe(200);
    const preview = await viewer.post('/templates/validate', {
      Subject: 'Hi {{ name }}',
      TextBody: '{{#each items}}',
      TestRenderModel: { name: 'Ada' },
    });
    expect(preview.status).toBe(200);
    expect(preview.body.Subject.RenderedContent).toBe('Hi Ada');
    expect(preview.body.TextBody.ValidationErrors[0]).toMatchObject({ Line: 1, CharacterPosition: 1 });
    for (const [what, attempt, doing] of [
      ['create', () => viewer.post('/templates', { Name: 'x', Subject: 'x', TextBody: 'x' }), 'create templates'],
      ['edit', () => viewer.put(`/templates/${alias}`, { Name: 'y' }), 'edit templates'],
      ['delete', () => viewer.delete(`/templates/${alias}`), 'delete templates'],
      [
        'test',
        () => viewer.post(`/templates/${alias}/test`, { From: `app@${a.domain}`, TemplateModel: {} }),
        'send test messages',
      ],
    ] as const) {
      const response = await attempt();
      expect(response.status, what).toBe(403);
      expect(response.body.Message, what).toBe(`A viewer cannot ${doing}; ask an admin of the organization`);
    }
  });

  it("answers another organization's member as for an unknown template, by id and by alias", async () => {
    const other = members.adminB.client;
    for (const name of [String(templateId), alias]) {
      for (const response of [
        await other.get(`/templates/${name}`),
        await other.get(`/templates/${name}/versions`),
        await other.put(`/templates/${name}`, { Name: 'taken' }),
        await other.delete(`/templates/${name}`),
        await other.post(`/templates/${name}/test`, { From: `app@${b.domain}`, TemplateModel: {} }),
      ]) {
        expect(response.status, name).toBe(422);
        expect(response.body.ErrorCode, name).toBe(1101);
      }
    }
    expect((await other.get('/templates')).body.Templates).toEqual([]);
    expect((await members.developerA.client.get(`/templates/${alias}`)).body.Name).toBe('Welcome');
  });

  it("sends a test to the member's own address only, and refuses a From outside the organization's domains", async () => {
    const { client, email } = members.developerA;
    const sent = await client.post(`/templates/${alias}/test`, {
      From: `app@${a.domain}`,
      TemplateModel: { name: 'Ada' },
      To: 'someone-else@example.net',
    });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ To: email, ErrorCode: 0 });
    expect(sent.body.MessageID).toMatch(/[0-9a-f-]{36}/);

    const foreign = await client.post(`/templates/${alias}/test`, { From: `app@${b.domain}`, TemplateModel: {} });
    expect(foreign.status).toBe(422);
    expect(foreign.body.ErrorCode).toBe(400);
  });
});
