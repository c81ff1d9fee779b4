import { randomUUID } from 'node:crypto';
import {
  checksumOf,
  type AccountsView,
  type AllowanceCounter,
  type EventAppender,
  type SuppressionView,
} from '@sendline/infra';
import { SendUseCase, type SendRefusal, type SendRefusalCode } from '../sending';
import { systemSender, type SystemSender } from './systemSender';

/** One system mail: to people, a subject, a text body (an HTML body too, if any) and a tag to find it by. */
export interface SystemMessage {
  to: string[];
  subject: string;
  textBody: string;
  htmlBody?: string;
  tag: string;
}

/** A system mail the send path refused: its refusal's code (e.g. 'AllRecipientsSuppressed') and the refusal. */
export class SystemMailRefused extends Error {
  readonly code: SendRefusalCode;

  constructor(readonly refusal: SendRefusal) {
    const reason = 'reason' in refusal ? refusal.reason : undefined;
    super(
      `system mail refused: ${refusal.code}${reason ? ` (${reason})` : ''}` +
        (refusal.code === 'SenderSignatureNotFound' || refusal.code === 'SenderSignatureNotConfirmed'
          ? ': the system organization is not set up (npm run admin -- system setup)'
          : ''),
    );
    this.name = 'SystemMailRefused';
    this.code = refusal.code;
  }
}

export interface SystemMailOptions {
  /** The send use case (POST /email's), or what to build one from. */
  sending:
    | SendUseCase
    | {
        store: EventAppender;
        accounts: Pick<AccountsView, 'domain' | 'organization'>;
        suppressions: Pick<SuppressionView, 'suppressedAmongMany'>;
        allowance: Pick<AllowanceCounter, 'used' | 'reserve'>;
        now?: () => number;
        newId?: () => string;
      };
  /** The configured sender (`systemSenderFromEnv()`): `Sendline <no-reply@system.sendline.test>` by default. */
  sender: string;
}

/**
 * Sends system mail as the system organization with a live send (its allowance is unlimited). A refusal (the
 * system organization missing, every recipient suppressed) throws SystemMailRefused; a service out of reach
 * throws as the send path does (InfrastructureError), so the caller decides whether to retry.
 */
export class SystemMail {
  readonly sender: SystemSender;
  private readonly sending: SendUseCase;

  constructor(options: SystemMailOptions) {
    this.sender = systemSender(options.sender);
    const sending = options.sending;
    this.sending =
      sending instanceof SendUseCase
        ? sending
        : new SendUseCase({
            ...sending,
            now: sending.now ?? Date.now,
            newId: sending.newId ?? randomUUID,
          });
  }

  /**
   * Sends one message; resolves with its MessageID once MessageAccepted is in Kafka. With `once` (a name for this
   * message and when it was first due), sending it again appends the very same MessageAccepted — the send path's
   * Idempotency-Key — which the sender delivers once: a caller that resends after a crash sends no second email.
   */
  async send(message: SystemMessage, once?: { key: string; firstAt: number }): Promise<{ messageId: string }> {
    const body = {
      From: this.sender.from,
      To: message.to.join(', '),
      Subject: message.subject,
      TextBody: message.textBody,
      ...(message.htmlBody !== undefined ? { HtmlBody: message.htmlBody } : {}),
      Tag: message.tag,
    };
    const result = await this.sending.send(
      { organizationId: this.sender.organizationId, mode: 'live' },
      body,
      once && { key: once.key, requestHash: checksumOf(body), submittedAt: once.firstAt },
    );
    if (!result.ok) throw new SystemMailRefused(result.refusal);
    return { messageId: result.accepted.messageId };
  }
}
