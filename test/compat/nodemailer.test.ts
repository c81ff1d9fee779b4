/**
 * Nodemailer with `nodemailer-postmark-transport` 7.0.0 (the Postmark transport most Node apps use) against the real
 * API (docs/api.md, "Frameworks' mail backends"), configured as its README says with only the Postmark client's host
 * changed: `postmarkOptions: { requestHost, useHttps: false }` (the transport's `postmarkOptions` are the client's
 * options; Tag and Metadata are the mail's `tag` and `metadata`). What arrived is read back as a user would: the
 * message's details and its MIME dump through the API.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import nodemailer from 'nodemailer';
import postmarkTransport from 'nodemailer-postmark-transport';
import PostalMime from 'postal-mime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { call } from '../support/http';
import { startActivityProjection } from '../support/projector';
import { eventually } from '../support/services';

let api: TestApi;
let org: TestOrganization;
let projection: Awaited<ReturnType<typeof startActivityProjection>>;
let folder: string;

const id = randomUUID().slice(0, 8);
const at = (local: string) => `${local}-${id}@dest.example.net`;
const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 251))]);
const CSV = Buffer.from('order,total\n1234,99.50\n');
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

function transportFor(key: string) {
  return nodemailer.createTransport(
    postmarkTransport({
      auth: { apiKey: key },
      postmarkOptions: { requestHost: api.baseUrl.replace(/^http:\/\//, ''), useHttps: false },
    }),
  );
}

async function details(messageId: string): Promise<Record<string, any>> {
  return eventually(
    async () => {
      const answer = await call(api.baseUrl, 'GET', `/messages/outbound/${messageId}/details`, { key: org.liveKey });
      return answer.status === 200 ? (answer.body as Record<string, any>) : undefined;
    },
    30_000,
    `the details of ${messageId}`,
  );
}

async function dumped(messageId: string) {
  const answer = await call(api.baseUrl, 'GET', `/messages/outbound/${messageId}/dump`, { key: org.liveKey });
  expect(answer.status).toBe(200);
  return PostalMime.parse(answer.body.Body as string);
}

beforeAll(async () => {
  api = await startTestApi();
  org = await createTestOrganization(api.deps, { domain: `nodemailer-${id}.example.com` });
  projection = await startActivityProjection(api.deps.store);
  folder = await mkdtemp(join(tmpdir(), 'sendline-nodemailer-'));
}, 120_000);

afterAll(async () => {
  await projection?.stop();
  await api?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe('Nodemailer with nodemailer-postmark-transport', () => {
  it('sends every field, and attachments from a buffer, a stream and a path, as they were given', async () => {
    const notes = join(folder, 'notes.txt');
    await writeFile(notes, 'Grüße aus Köln\n');
    const info = await transportFor(org.liveKey).sendMail({
      from: `"Shop Orders" <orders@${org.domain}>`,
      to: [`Ann Lee <${at('ann')}>`, at('bob')],
      cc: at('carl'),
      bcc: at('bea'),
      replyTo: at('desk'),
      subject: 'Order 1234 — merci',
      text: 'Your order is on its way.',
      html: '<p>Your order is on its way.</p><img src="cid:logo@shop">',
      attachments: [
        { filename: 'invoice.pdf', content: PDF, contentType: 'application/pdf' },
        { filename: 'order.csv', content: Readable.from([CSV]), contentType: 'text/csv' },
        { path: notes },
        { filename: 'logo.png', content: PNG, cid: 'logo@shop' },
      ],
      headers: { 'X-Order': '1234', 'x-campaign': 'winter' },
      tag: 'orders',
      metadata: { order: '1234', channel: 'web' },
    });
    expect(info.messageId).toMatch(/^[0-9a-f-]{36}$/);
    expect(info.accepted.map((result: { ErrorCode: number }) => result.ErrorCode)).toEqual([0]);
    expect(info.rejected).toEqual([]);

    const message = await details(info.messageId);
    expect(message).toMatchObject({
      MessageID: info.messageId,
      From: `"Shop Orders" <orders@${org.domain}>`,
      Subject: 'Order 1234 — merci',
      Tag: 'orders',
      Metadata: { order: '1234', channel: 'web' },
      TextBody: 'Your order is on its way.',
    });
    expect(message.To).toEqual([
      { Email: at('ann'), Name: 'Ann Lee' },
      { Email: at('bob'), Name: '' },
    ]);
    expect(message.Cc.map((mailbox: { Email: string }) => mailbox.Email)).toEqual([at('carl')]);
    expect(message.Bcc.map((mailbox: { Email: string }) => mailbox.Email)).toEqual([at('bea')]);
    expect(message.Attachments).toEqual(['invoice.pdf', 'order.csv', 'notes.txt', 'logo.png']);

    const mime = await dumped(info.messageId);
    expect(mime.replyTo?.map((mailbox) => mailbox.address)).toEqual([at('desk')]);
    const header = (name: string) => mime.headers.find((h) => h.key === name)?.value;
    expect(header('x-order')).toBe('1234');
    expect(header('x-campaign')).toBe('winter');
    expect(mime.html).toContain('src="cid:logo@shop"');
    const file = (name: string) => mime.attachments.find((attachment) => attachment.filename === name);
    expect(Buffer.from(file('invoice.pdf')!.content as ArrayBuffer).equals(PDF)).toBe(true);
    expect(Buffer.from(file('order.csv')!.content as ArrayBuffer).equals(CSV)).toBe(true);
    expect(new TextDecoder().decode(file('notes.txt')!.content as ArrayBuffer)).toBe('Grüße aus Köln\n');
    expect(file('notes.txt')!.mimeType).toBe('text/plain');
    expect(file('logo.png')).toMatchObject({ mimeType: 'image/png', contentId: '<logo@shop>' });
    expect(Buffer.from(file('logo.png')!.content as ArrayBuffer).equals(PNG)).toBe(true);
  });

  it('sends a batch through the transport’s sendBatch, one MessageID each', async () => {
    const transport = postmarkTransport({
      auth: { apiKey: org.liveKey },
      postmarkOptions: { requestHost: api.baseUrl.replace(/^http:\/\//, ''), useHttps: false },
    });
    const result = await transport.sendBatch(
      [at('b1'), at('b2')].map((to) => ({
        data: { from: `orders@${org.domain}`, to, subject: 'Batch', text: 'Hello', tag: 'batch' },
      })),
    );
    expect(result.accepted.map((sent) => sent.ErrorCode)).toEqual([0, 0]);
    expect(new Set(result.accepted.map((sent) => sent.MessageID)).size).toBe(2);
  });

  it('rejects with the Postmark client’s error, carrying our ErrorCode and status', async () => {
    const refused = (promise: Promise<unknown>) =>
      promise.then(
        () => ({ name: 'none' }),
        (error: { name: string; code: number; statusCode: number; message: string }) => ({
          name: error.name,
          code: error.code,
          statusCode: error.statusCode,
          message: error.message,
        }),
      );
    const mail = { from: `orders@${org.domain}`, to: at('ann'), subject: 'x', text: 'x' };
    expect(await refused(transportFor(`sl_live_${'z'.repeat(40)}`).sendMail(mail))).toMatchObject({
      name: 'InvalidAPIKeyError',
      code: 10,
      statusCode: 401,
    });
    expect(
      await refused(transportFor(org.liveKey).sendMail({ ...mail, from: 'x@not-ours.example.org' })),
    ).toMatchObject({
      name: 'ApiInputError',
      code: 400,
      statusCode: 422,
    });
    expect(
      await refused(
        transportFor(org.liveKey).sendMail({ ...mail, attachments: [{ filename: 'setup.exe', content: 'MZ' }] }),
      ),
    ).toMatchObject({ code: 411, statusCode: 422, message: expect.stringContaining('.exe are forbidden') });
  });
});
