import { randomUUID } from 'node:crypto';
import { ensureSystemOrganization, SystemMailRefused, systemSender } from '@sendline/application';
import type { MessageAcceptedData } from '@sendline/domain';
import { DEFAULT_SYSTEM_SENDER } from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ensureTestSystemOrganization,
  startTestApi,
  testAccountsService,
  testSystemMail,
  type TestApi,
} from '../support/api';
import { eventsOfMessage } from '../support/events';

/**
 * System mail (application/src/systemMail): our own processes send through POST /email's use case, as the system
 * organization, from the configured system sender; the organization is provisioned idempotently.
 */

let api: TestApi;

beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

describe('the system organization', () => {
  it('is set up once: a second setup changes nothing and finds the domain verified', async () => {
    const first = await ensureTestSystemOrganization(api.deps);
    expect(first.verified).toBe(true);
    expect(first.domain).toBe('system.sendline.test');
    const again = await ensureTestSystemOrganization(api.deps);
    expect(again).toMatchObject({ organizationId: first.organizationId, verified: true });
    expect(again.created).toEqual({ organization: false, domain: false, verified: false });
    expect(await api.deps.accounts.domain(first.organizationId, first.domain)).toMatchObject({ verified: true });
  });

  it('answers unverified with the records to publish when DNS does not have them', async () => {
    const sender = `Sendline <no-reply@${randomUUID().slice(0, 8)}.unpublished.test>`;
    const status = await ensureSystemOrganization({
      accounts: testAccountsService(api.deps, { resolveTxt: async () => [], resolveMx: async () => [] }),
      view: api.deps.accounts,
      sender,
    });
    expect(status).toMatchObject({ verified: false, returnPathVerified: false });
    expect(status.created).toEqual({ organization: true, domain: true, verified: false });
    expect(status.dnsRecords.map((record) => record.purpose).sort()).toEqual(
      ['dkim', 'dmarc', 'mx', 'ownership', 'spf'].sort(),
    );
    // Sending before the domain is verified is refused by the send path's own rule.
    await expect(
      testSystemMail(api.deps, sender).send({ to: ['a@example.net'], subject: 'x', textBody: 'x', tag: 't' }),
    ).rejects.toMatchObject({ name: 'SystemMailRefused', code: 'SenderSignatureNotConfirmed' });
  });
});

describe('SystemMail.send', () => {
  it('appends MessageAccepted as the system organization, from the system sender, like any message', async () => {
    const status = await ensureTestSystemOrganization(api.deps);
    const to = `member-${randomUUID().slice(0, 8)}@example.net`;
    const { messageId } = await testSystemMail(api.deps).send({
      to: [to],
      subject: 'Sign in to Sendline',
      textBody: 'Your link:\nhttp://127.0.0.1/console/sign-in#token=abc\n',
      htmlBody: '<p>Your link</p>',
      tag: 'console-sign-in',
    });
    // Only the accepted events: the console's browser tests run a sender that delivers the system organization's mail,
    // so a MessageSent may follow while the files run side by side.
    const events = (await eventsOfMessage(api.deps.store, messageId)).filter(
      (event) => event.type === 'MessageAccepted',
    );
    expect(events).toHaveLength(1);
    const accepted = events[0]!;
    expect(accepted.metadata.organizationId).toBe(status.organizationId);
    const data = accepted.data as MessageAcceptedData;
    expect(data.from).toMatchObject({ email: 'no-reply@system.sendline.test', name: 'Sendline' });
    expect(data.subject).toBe('Sign in to Sendline');
    expect(data.tag).toBe('console-sign-in');
    expect(data.htmlBody).toBe('<p>Your link</p>');
    expect(data.activeRecipients).toEqual([to]);
  });

  it('sent again under the same `once` key, appends the very same MessageAccepted (one message for the sender)', async () => {
    await ensureTestSystemOrganization(api.deps);
    const mail = testSystemMail(api.deps);
    const message = {
      to: [`admin-${randomUUID().slice(0, 8)}@example.net`],
      subject: 'Webhook 7 was disabled',
      textBody: 'Every call failed.\n',
      tag: 'webhook-disabled',
    };
    const once = { key: `webhook-disabled:${randomUUID()}`, firstAt: Date.now() - 60_000 };
    const first = await mail.send(message, once);
    const again = await mail.send(message, once);
    expect(again.messageId).toBe(first.messageId);
    const events = (await eventsOfMessage(api.deps.store, first.messageId)).filter(
      (event) => event.type === 'MessageAccepted',
    );
    expect(events.map((event) => [event.type, event.metadata.eventId, event.metadata.occurredAt])).toEqual([
      ['MessageAccepted', events[0]!.metadata.eventId, once.firstAt],
      ['MessageAccepted', events[0]!.metadata.eventId, once.firstAt],
    ]);
    // Another key is another message.
    const other = await mail.send(message, { ...once, key: `${once.key}:other` });
    expect(other.messageId).not.toBe(first.messageId);
  });

  it('throws the send path’s refusal (its catalogue code) for a recipient that is not an address', async () => {
    await ensureTestSystemOrganization(api.deps);
    const mail = testSystemMail(api.deps);
    const error = await mail
      .send({ to: ['not an address'], subject: 'x', textBody: 'x', tag: 't' })
      .catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(SystemMailRefused);
    expect((error as SystemMailRefused).code).toBe('InvalidEmailRequest');
  });

  it('derives the system organization from the sender domain, the default being system.sendline.test', () => {
    expect(systemSender(DEFAULT_SYSTEM_SENDER)).toMatchObject({
      email: 'no-reply@system.sendline.test',
      domain: 'system.sendline.test',
    });
    expect(systemSender('Other <x@SYSTEM.sendline.test>').organizationId).toBe(
      systemSender(DEFAULT_SYSTEM_SENDER).organizationId,
    );
    expect(() => systemSender('a@x.test, b@x.test')).toThrow(/one email address/);
  });
});
