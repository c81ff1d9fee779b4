import type { Mailbox } from './addresses';

/** What a valid send request becomes: the domain's outbound message and its parts. */

export type TrackLinks = 'None' | 'HtmlAndText' | 'HtmlOnly' | 'TextOnly';
export const TRACK_LINKS_VALUES: readonly TrackLinks[] = ['None', 'HtmlAndText', 'HtmlOnly', 'TextOnly'];

export interface MessageHeader {
  name: string;
  value: string;
}

export interface MessageAttachment {
  name: string;
  /** Base64 (strict, as checked). */
  content: string;
  contentType: string;
  contentId?: string;
}

/** A send request that passed validation: what the API puts into AcceptMessage. */
export interface OutboundMessage {
  from: Mailbox;
  to: Mailbox[];
  cc: Mailbox[];
  bcc: Mailbox[];
  replyTo: Mailbox[];
  /** "" when the request had none. */
  subject: string;
  tag?: string;
  textBody?: string;
  htmlBody?: string;
  headers: MessageHeader[];
  metadata: Record<string, string>;
  attachments: MessageAttachment[];
  trackOpens: boolean;
  trackLinks: TrackLinks;
  messageStream: 'outbound';
  /** Subject + bodies + custom headers + decoded attachments, in bytes (UTF-8). */
  sizeBytes: number;
  /** The template the subject and bodies were rendered from (a send with a template); absent for a plain send. */
  template?: TemplateUsed;
}

/** A template and the version of it a message was rendered from. */
export interface TemplateUsed {
  templateId: number;
  version: number;
}
