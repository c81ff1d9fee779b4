/**
 * A message sent with a template, end to end: the API renders it (a layout around the template, the layout's CSS
 * inlined), the sender delivers it to the test mail server with a valid DKIM signature, and the activity shows the
 * rendered content with the template and the version it was sent from.
 */
import { randomUUID } from 'node:crypto';
import { createClickHouse, migrate, secretKeyFromEnv, type TestMailServer } from '@sendline/infra';
import type { Sender } from '@sendline/sender';
import PostalMime from 'postal-mime';
import * as postmark from 'postmark';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailServer, startTestSender, testSenderConfig } from '../sender/support';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { startActivityProjection } from '../support/projector';
import { addresses, eventually } from '../support/services';

let api: TestApi;
let org: TestOrganization;
let mail: TestMailServer;
let sender: Sender;
let projection: Awaited<ReturnType<typeof startActivityProjection>>;
let client: postmark.ServerClient;

beforeAll(async () => {
  const clickhouse = createClickHouse(addresses.clickhouseUrl);
  await migrate(clickhouse, addresses.clickhouseDatabase);
  await clickhouse.close();
  api = await startTestApi();
  org = await createTestOrganization(api.deps);
  mail = await startMailServer(api.deps.accounts, [org]);
  sender = await startTestSender(
    api.deps,
    [org.organizationId],
    testSenderConfig({ host: mail.host, port: mail.port }),
    secretKeyFromEnv(),
  );
  projection = await startActivityProjection(api.deps.store);
  client = new postmark.ServerClient(org.liveKey, {
    requestHost: api.baseUrl.replace(/^http:\/\//, ''),
    useHttps: false,
  });
});

afterAll(async () => {
  await sender?.stop();
  await projection?.stop();
  await mail?.stop();
  await api?.close();
});

describe('a message sent with a template and a layout', () => {
  it('is delivered rendered, its CSS inlined, and its details name the template and its version', async () => {
    const layout = `layout-${randomUUID().slice(0, 8)}`;
    await client.createTemplate({
      Name: 'Brand',
      Alias: layout,
      TemplateType: postmark.Models.TemplateTypes.Layout,
      HtmlBody:
        '<html><head><style>h1 { color: #ff6600; } .fine { font-size: 10px; }</style></head>' +
        '<body>{{{ @content }}}<p class="fine">Acme Ltd</p></body></html>',
      TextBody: '{{{ @content }}}\n-- Acme Ltd',
    });
    const alias = `shipped-${randomUUID().slice(0, 8)}`;
    const template = await client.createTemplate({
      Name: 'Shipped',
      Alias: alias,
      Subject: 'Order {{ order.id }} shipped',
      HtmlBody: '<h1>Hi {{ name }}</h1><ul>{{#each order.items}}<li>{{ title }}</li>{{/each}}</ul>',
      TextBody: 'Hi {{ name }}{{#each order.items}}\n- {{ title }}{{/each}}',
      LayoutTemplate: layout,
    });
    await client.editTemplate(alias, { Subject: 'Your order {{ order.id }} has shipped' });
    const to = `ann-${randomUUID().slice(0, 8)}@dest.example.net`;
    const sent = await client.sendEmailWithTemplate({
      From: `Shop <orders@${org.domain}>`,
      To: to,
      TemplateAlias: alias,
      TemplateModel: { name: 'Ann & Bob', order: { id: 42, items: [{ title: 'Teapot <large>' }, { title: 'Cups' }] } },
      Tag: 'shipping',
    });
    expect(sent.ErrorCode).toBe(0);

    const received = await eventually(
      async () => mail.messages().find((m) => m.messageId === `<${sent.MessageID}@${org.domain}>`),
      30_000,
      'the message at the mail server',
    );
    expect(received.dkim.result).toBe('pass');
    expect(received.subject).toBe('Your order 42 has shipped');
    const parsed = await PostalMime.parse(received.raw!);
    expect(parsed.html).toContain('<h1 style="color: #ff6600;">Hi Ann &amp; Bob</h1>');
    expect(parsed.html).toContain('<li>Teapot &lt;large&gt;</li><li>Cups</li>');
    expect(parsed.html).toContain('<p class="fine" style="font-size: 10px;">Acme Ltd</p>');
    expect(parsed.html).not.toContain('<style>');
    expect(parsed.text?.trim()).toBe('Hi Ann & Bob\n- Teapot <large>\n- Cups\n-- Acme Ltd');

    const details = await eventually(
      async () => {
        const found = await client.getOutboundMessageDetails(sent.MessageID).catch(() => undefined);
        return found?.MessageEvents.some((e) => e.Type === 'Delivered') ? found : undefined;
      },
      30_000,
      'the message delivered in the activity',
    );
    expect((details as unknown as { Template: unknown }).Template).toEqual({
      TemplateId: template.TemplateId,
      Version: 2,
    });
    expect(details.Subject).toBe('Your order 42 has shipped');
    expect(details.HtmlBody).toContain('<h1 style="color: #ff6600;">Hi Ann &amp; Bob</h1>');
  });
});
