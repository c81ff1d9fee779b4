import { SendingService as SendUseCase, type IdempotentRequest, type SendDecision } from '@sendline/application';
import type { StoredApiKey } from '@sendline/infra';
import { Type, type Static } from 'typebox';
import { parseAddressListCached } from './addressListCache';
import type { ApiDependencies } from './context';
import type { PostmarkError } from './errorBody';
import { errorAnswer } from './errors';
import { messagesAccepted, messagesRefused } from './metrics';

export type { IdempotentRequest } from '@sendline/application';

/**
 * Postmark's send result: the 200 answer of POST /email and each entry of POST /email/batch's array (an entry
 * for a refused message carries only ErrorCode and Message, hence the optional fields).
 */
export const SendResult = Type.Object({
  To: Type.Optional(Type.String()),
  Cc: Type.Optional(Type.String()),
  Bcc: Type.Optional(Type.String()),
  SubmittedAt: Type.Optional(Type.String()),
  MessageID: Type.Optional(Type.String()),
  ErrorCode: Type.Integer(),
  Message: Type.String(),
});
export type SendResult = Static<typeof SendResult>;

export type SendOutcome = { status: 200; body: SendResult } | { status: number; body: PostmarkError };

/** A decision of the send use case as the API's answer: the result, or the catalogue's error (counted). */
function answerOf(decision: SendDecision): SendOutcome {
  if (decision.ok) return { status: 200, body: decision.result };
  const answer = errorAnswer(decision.code, decision.params);
  messagesRefused.inc({ error_code: String(answer.body.ErrorCode) });
  return answer;
}

/**
 * POST /email's side of the send use case (application/src/sending): the API's address-list cache and metrics
 * wired in, and each decision turned into Postmark's answer through the error catalogue.
 */
export class SendingService {
  private readonly useCase: SendUseCase;

  constructor(deps: ApiDependencies) {
    this.useCase = new SendUseCase({
      store: deps.store,
      accounts: deps.accounts,
      suppressions: deps.suppressions,
      allowance: deps.allowance,
      now: deps.now,
      newId: deps.newId,
      parseAddressList: parseAddressListCached,
      onAccepted: (count) => messagesAccepted.inc({ mode: 'live' }, count),
    });
  }

  /** Sends one message; the answer is Postmark's send result or error. */
  async send(key: StoredApiKey, body: unknown, idempotency?: IdempotentRequest): Promise<SendOutcome> {
    return answerOf(await this.useCase.send(key, body, idempotency));
  }

  /** Sends several messages, each checked on its own (see the use case). */
  async sendMany(key: StoredApiKey, bodies: unknown[], idempotency?: IdempotentRequest): Promise<SendOutcome[]> {
    return (await this.useCase.sendMany(key, bodies, idempotency)).map(answerOf);
  }
}
