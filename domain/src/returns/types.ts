import type { MessageHeader } from '../validation/outboundMessage';

/**
 * What one message that came back to our return path (`b.{token}@…`) is, once read: a delivery report (RFC 3464 DSN,
 * or a bounce in prose), a complaint (RFC 5965 ARF), an automatic reply (RFC 3834, out-of-office), or something we
 * cannot read. Reading never fails: what cannot be read is `Unrecognized` with the reason.
 */
export type ReturnedMail =
  | {
      kind: 'DeliveryReport';
      /** True when read from a bounce in plain prose, without a message/delivery-status part. */
      prose: boolean;
      reportingMta?: string;
      /** Never empty. */
      recipients: ReportedRecipient[];
      original: OriginalMessage;
    }
  | {
      kind: 'Complaint';
      /** Lowercased: `abuse`, `fraud`, `virus`, `not-spam`, `other`, … (see COMPLAINT_FEEDBACK_TYPES). */
      feedbackType: string;
      userAgent?: string;
      /** Every Original-Rcpt-To (RFC 5965 lets it repeat), as written without brackets; often absent (redacted). */
      originalRcptTo: string[];
      originalMailFrom?: string;
      arrivalDate?: string;
      original: OriginalMessage;
    }
  | {
      kind: 'AutoReply';
      subject?: string;
      /** Who replied (the From header's value). */
      from?: string;
      original: OriginalMessage;
    }
  | { kind: 'Unrecognized'; reason: string; subject?: string; from?: string };

export type ReportedAction = 'failed' | 'delayed' | 'delivered' | 'relayed' | 'expanded';

/** One recipient a delivery report speaks of (RFC 3464 §2.3), or one found in a bounce's prose. */
export interface ReportedRecipient {
  /** Final-Recipient's address, as written without its type and brackets. */
  finalRecipient?: string;
  /** Original-Recipient's address (the address as we gave it, when the reporting MTA kept it). */
  originalRecipient?: string;
  action: ReportedAction;
  /** The RFC 3463 enhanced status code, normalised: "5.1.1". */
  status?: string;
  /** As written, with its type when it has one: `smtp; 550 5.1.1 <bob@example.org>: User unknown`. */
  diagnosticCode?: string;
  /** Remote-MTA's host, without its type. */
  remoteMta?: string;
}

/**
 * What the report tells of the original message (headers of the attached message/rfc822 or text/rfc822-headers
 * part).
 */
export interface OriginalMessage {
  /** The Message-ID header as written: `<…@…>`. */
  messageId?: string;
  /**
   * Our message id, when the original is one of ours: the local part of the Message-ID we write, `<{message
   * id}@{From domain}>` (compose.ts; a request may not set Message-ID itself), when it is a UUID.
   */
  sendlineMessageId?: string;
  /** The Return-Path's address (our `b.{token}@…`, when the reporting MTA kept it). */
  returnPath?: string;
  /** The To header's value as written (display names included). */
  to?: string;
  subject?: string;
}

/**
 * The pieces of a returned message that MIME parsing (infra) finds, handed to `returnedMailOf` to be read: text
 * only, charsets and transfer encodings already decoded.
 */
export interface ReturnedMailParts {
  /** The message's own header fields in their order, values unfolded, encoded words decoded. */
  headers: readonly MessageHeader[];
  /** The report-type parameter of a multipart/report Content-Type, lowercased. */
  reportType?: string;
  /** The text of the first message/delivery-status (or message/global-delivery-status) part. */
  deliveryStatus?: string;
  /** The text of the first message/feedback-report part. */
  feedbackReport?: string;
  /** The header fields of the first attached message/rfc822 (or message/global) or text/rfc822-headers part. */
  originalHeaders?: readonly MessageHeader[];
  /** The human-readable text: the text/plain parts (or the text of the HTML ones). */
  text?: string;
}
