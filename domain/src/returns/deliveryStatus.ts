import { addressOfField, hostOfField, parseFieldBlocks, stripComments, type ReportField } from './fields';
import type { ReportedAction, ReportedRecipient } from './types';

/**
 * The fields of a message/delivery-status part (RFC 3464 §2.2, §2.3): per-message fields, then one block per
 * recipient. Read forgivingly, as reporting MTAs write it:
 * - per-message fields (Reporting-MTA, Arrival-Date, …) are taken from wherever they first appear;
 * - a recipient starts with a new block, or within a block when a recipient field it already has comes again (an
 *   MTA that forgot the blank line between two recipients);
 * - a recipient without a known Action takes it from its Status's class (5 failed, 4 delayed, 2 delivered); one
 *   with neither is left out, as is every recipient after the first MAX_REPORTED_RECIPIENTS;
 * - Status is kept only when it is an enhanced status code (`5.1.1`, comments dropped).
 */

export interface DeliveryStatusFields {
  reportingMta?: string;
  arrivalDate?: string;
  recipients: ReportedRecipient[];
}

/** More recipients than a message of ours can have (the return-path token names 256 at most). */
export const MAX_REPORTED_RECIPIENTS = 1000;

const ACTIONS: ReadonlySet<string> = new Set<ReportedAction>(['failed', 'delayed', 'delivered', 'relayed', 'expanded']);
const RECIPIENT_FIELDS: ReadonlySet<string> = new Set([
  'original-recipient',
  'final-recipient',
  'action',
  'status',
  'remote-mta',
  'diagnostic-code',
  'last-attempt-date',
  'final-log-id',
  'will-retry-until',
]);
const STATUS = /^([245])\.(\d{1,3})\.(\d{1,3})(?![\d.])/;

/** An enhanced status code as "5.1.1" (leading zeros dropped), or undefined when the text does not start with one. */
export function normalisedStatus(value: string): string | undefined {
  const match = STATUS.exec(stripComments(value));
  return match ? `${match[1]}.${Number(match[2])}.${Number(match[3])}` : undefined;
}

function actionOf(action: string | undefined, status: string | undefined): ReportedAction | undefined {
  const word = action === undefined ? '' : (stripComments(action).split(/[\s;]/)[0] ?? '').toLowerCase();
  if (ACTIONS.has(word)) return word as ReportedAction;
  switch (status?.[0]) {
    case '5':
      return 'failed';
    case '4':
      return 'delayed';
    case '2':
      return 'delivered';
    default:
      return undefined;
  }
}

function recipientOf(fields: ReadonlyMap<string, string>): ReportedRecipient | undefined {
  const status = fields.has('status') ? normalisedStatus(fields.get('status')!) : undefined;
  const action = actionOf(fields.get('action'), status);
  if (action === undefined) return undefined;
  const finalRecipient = fields.has('final-recipient') ? addressOfField(fields.get('final-recipient')!) : undefined;
  const originalRecipient = fields.has('original-recipient')
    ? addressOfField(fields.get('original-recipient')!)
    : undefined;
  const remoteMta = fields.has('remote-mta') ? hostOfField(fields.get('remote-mta')!) : undefined;
  const diagnosticCode = fields.get('diagnostic-code');
  return {
    ...(finalRecipient !== undefined && { finalRecipient }),
    ...(originalRecipient !== undefined && { originalRecipient }),
    action,
    ...(status !== undefined && { status }),
    ...(diagnosticCode !== undefined && diagnosticCode !== '' && { diagnosticCode }),
    ...(remoteMta !== undefined && { remoteMta }),
  };
}

export function parseDeliveryStatus(text: string): DeliveryStatusFields {
  const perMessage = new Map<string, string>();
  const recipients: ReportedRecipient[] = [];
  let current = new Map<string, string>();
  const endRecipient = () => {
    if (current.size > 0 && recipients.length < MAX_REPORTED_RECIPIENTS) {
      const recipient = recipientOf(current);
      if (recipient) recipients.push(recipient);
    }
    current = new Map();
  };
  const take = (field: ReportField) => {
    if (!RECIPIENT_FIELDS.has(field.name)) {
      if (!perMessage.has(field.name)) perMessage.set(field.name, field.value);
      return;
    }
    // A field the recipient already has starts the next one.
    if (current.has(field.name)) endRecipient();
    current.set(field.name, field.value);
  };
  for (const block of parseFieldBlocks(text)) {
    for (const field of block) take(field);
    endRecipient();
  }
  const reportingMta = perMessage.has('reporting-mta') ? hostOfField(perMessage.get('reporting-mta')!) : undefined;
  const arrivalDate = perMessage.get('arrival-date');
  return {
    ...(reportingMta !== undefined && { reportingMta }),
    ...(arrivalDate !== undefined && arrivalDate !== '' && { arrivalDate }),
    recipients,
  };
}
