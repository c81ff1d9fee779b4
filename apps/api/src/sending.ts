import {
  SendUseCase,
  type AcceptedMessage,
  type IdempotentRequest,
  type SendingAs,
  type SendRefusal,
  type SendResult as SendUseCaseResult,
} from '@sendline/application';
import type { TemplateUsed } from '@sendline/domain';
import { Type, type Static } from 'typebox';
import { parseAddressListCached } from './addressListCache';
import type { ApiDependencies } from './context';
import type { PostmarkError } from './errorBody';
import { errorAnswer, type ErrorCode, type ErrorParams } from './errors';
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

/** An accepted message in Postmark's words: the addresses listed, the time in ISO 8601, ErrorCode 0. */
function acceptedAnswer(accepted: AcceptedMessage): SendResult {
  return {
    To: accepted.to.join(', '),
    ...(accepted.cc.length ? { Cc: accepted.cc.join(', ') } : {}),
    ...(accepted.bcc.length ? { Bcc: accepted.bcc.join(', ') } : {}),
    SubmittedAt: new Date(accepted.submittedAt).toISOString(),
    MessageID: accepted.messageId,
    ErrorCode: 0,
    Message: accepted.test
      ? 'Test job accepted'
      : accepted.suppressedRecipients.length
        ? `OK. Not sent to suppressed recipients: ${accepted.suppressedRecipients.join(', ')}.`
        : 'OK',
  };
}

/**
 * A refusal as the catalogue's code and the parameters of its message. `code` is typed ErrorCode: a refusal
 * the catalogue has no answer for does not compile.
 */
function refusalError(refusal: SendRefusal): { code: ErrorCode; params: ErrorParams } {
  switch (refusal.code) {
    case 'SenderSignatureNotFound':
      return { code: refusal.code, params: { from: refusal.from } };
    case 'SenderSignatureNotConfirmed':
      return { code: refusal.code, params: { domain: refusal.domain } };
    case 'NotAllowedToSend':
      return { code: refusal.code, params: {} };
    default:
      return {
        code: refusal.code,
        params: { ...(refusal.suppressed ? { addresses: refusal.suppressed } : {}), detail: refusal.reason },
      };
  }
}

/** A result of the send use case as the API's answer: the accepted message, or the catalogue's error (counted). */
function answerOf(result: SendUseCaseResult): SendOutcome {
  if (result.ok) return { status: 200, body: acceptedAnswer(result.accepted) };
  const { code, params } = refusalError(result.refusal);
  const answer = errorAnswer(code, params);
  messagesRefused.inc({ error_code: String(answer.body.ErrorCode) });
  return answer;
}

/**
 * POST /email's answers: the send use case (application/src/sending) with the API's address-list cache and metrics
 * wired in, and each of its results turned into Postmark's answer through the error catalogue.
 */
export class PostmarkSendAnswers {
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
  async send(key: SendingAs, body: unknown, idempotency?: IdempotentRequest): Promise<SendOutcome> {
    return answerOf(await this.useCase.send(key, body, idempotency));
  }

  /** Sends several messages, each checked on its own (see the use case). */
  async sendMany(
    key: SendingAs,
    bodies: unknown[],
    idempotency?: IdempotentRequest,
    templates?: readonly (TemplateUsed | undefined)[],
  ): Promise<SendOutcome[]> {
    return (await this.useCase.sendMany(key, bodies, idempotency, templates)).map(answerOf);
  }
}
