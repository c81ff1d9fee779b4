import type { StoredEvent } from '@sendline/infra';
import { describe, expect, it } from 'vitest';
import { SendUseCase, type SendUseCaseOptions } from '../../src';

/**
 * The send use case without a server: views in memory, a store that records what was appended. It answers in the
 * domain's terms (an accepted message, a refusal with its code); the API words them as Postmark's answers.
 */

const NOW = Date.UTC(2026, 10, 28, 12);
const ORG = 'org-1';

function sendUseCase(overrides: { verified?: boolean; limit?: number | null; suppressed?: string[] } = {}) {
  const appended: StoredEvent[] = [];
  let id = 0;
  const options: SendUseCaseOptions = {
    store: { append: async (events: StoredEvent[]) => void appended.push(...events) },
    accounts: {
      domain: async (_org: string, name: string) =>
        name === 'shop.test' ? ({ verified: overrides.verified ?? true } as never) : null,
      organization: async () => ({ messagesPerMonth: overrides.limit ?? null }) as never,
    },
    suppressions: {
      suppressedAmongMany: async (_org: string, lists: readonly (readonly string[])[]) =>
        lists.map((list) => new Set(list.filter((address) => overrides.suppressed?.includes(address)))),
    },
    allowance: { used: async () => 0, reserve: async () => true },
    now: () => NOW,
    newId: () => `id-${++id}`,
  };
  return { useCase: new SendUseCase(options), appended };
}

const body = (to = 'bob@example.com') => ({ From: 'ada@shop.test', To: to, Subject: 'Hi', TextBody: 'Hello' });
const live = { organizationId: ORG, mode: 'live' };

describe('the send use case', () => {
  it('accepts a message: its id, time and recipients, one MessageAccepted appended', async () => {
    const { useCase, appended } = sendUseCase();
    const result = await useCase.send(live, body());
    expect(result).toEqual({
      ok: true,
      accepted: {
        messageId: 'id-1',
        submittedAt: NOW,
        to: ['bob@example.com'],
        cc: [],
        bcc: [],
        suppressedRecipients: [],
        test: false,
      },
    });
    expect(appended.map((event) => event.type)).toEqual(['MessageAccepted']);
  });

  it('refuses an invalid request with the validation code and its words', async () => {
    const { useCase, appended } = sendUseCase();
    const result = await useCase.send(live, { ...body(), To: 'bob' });
    expect(result).toMatchObject({ ok: false, refusal: { code: 'InvalidEmailRequest', reason: expect.any(String) } });
    expect(appended).toEqual([]);
  });

  it('refuses a From on an unverified domain, naming the domain', async () => {
    const { useCase } = sendUseCase({ verified: false });
    expect(await useCase.send(live, body())).toEqual({
      ok: false,
      refusal: { code: 'SenderSignatureNotConfirmed', domain: 'shop.test' },
    });
  });

  it('refuses a message whose every recipient is suppressed, naming them', async () => {
    const { useCase } = sendUseCase({ suppressed: ['bob@example.com'] });
    expect(await useCase.send(live, body())).toMatchObject({
      ok: false,
      refusal: { code: 'AllRecipientsSuppressed', suppressed: ['bob@example.com'] },
    });
  });

  it('answers each message of a batch on its own, in order, with one append', async () => {
    const { useCase, appended } = sendUseCase();
    const results = await useCase.sendMany(live, [body(), { ...body(), To: 'bob' }, body('carol@example.com')]);
    expect(results.map((result) => result.ok)).toEqual([true, false, true]);
    expect(appended).toHaveLength(2);
  });

  it('with a test key checks the allowance and appends nothing', async () => {
    const { useCase, appended } = sendUseCase({ limit: 0 });
    expect(await useCase.send({ organizationId: ORG, mode: 'test' }, body())).toEqual({
      ok: false,
      refusal: { code: 'NotAllowedToSend' },
    });
    expect(appended).toEqual([]);
  });
});
