import type { MessageHeader } from '../validation/outboundMessage';
import { headerValue, stripComments } from './fields';

/**
 * Whether a message is an automatic reply (an out-of-office, a vacation notice, an autoresponder). Read only after
 * the message was found to be neither a report nor a bounce: bounces carry `Auto-Submitted: auto-replied` too.
 *
 * Conservative, by its headers first:
 * 1. `Auto-Submitted: no` (RFC 3834: written by a person) says it is not, whatever else the message says;
 * 2. `Auto-Submitted: auto-replied` (RFC 3834 §5) says it is; `auto-generated` alone does not (a notice, not a
 *    reply);
 * 3. so do the markers autoresponders write without RFC 3834: `X-Autoreply` or `X-Autorespond` with a value other
 *    than `no`/`false`/`0`, and `Precedence: auto_reply`;
 * 4. else the subject, only when it starts with an out-of-office phrase followed by `:` or the end: "Out of
 *    Office", "Out of the office", "Automatic reply", "Auto reply", "Autoreply", "Auto-response", "Abwesenheitsnotiz",
 *    "Automatische Antwort", "Réponse automatique", "Respuesta automática", "Risposta automatica", "Automatisch
 *    antwoord" (Outlook/Exchange and the common autoresponders write "{phrase}: {original subject}"). A subject
 *    that merely mentions an absence ("Re: out of office next week?") is not enough.
 * An automatic reply never suppresses anything: the address answered, so it exists.
 */

/** The phrases an out-of-office subject starts with (Outlook/Exchange, Gmail, the common autoresponders). */
const OUT_OF_OFFICE_PHRASES = [
  'out of (?:the )?office(?: auto-?reply)?',
  'automatic reply',
  'auto[- ]?reply',
  'auto[- ]?response',
  'abwesenheitsnotiz',
  'automatische antwort',
  'réponse automatique',
  'respuesta automática',
  'risposta automatica',
  'automatisch antwoord',
];
const OUT_OF_OFFICE_SUBJECT = new RegExp(String.raw`^\s*(?:${OUT_OF_OFFICE_PHRASES.join('|')})\s*(?::|$)`, 'i');
const FALSE_VALUE = /^(?:no|false|0)$/i;

function firstToken(value: string): string {
  return (stripComments(value).split(/[\s;]/)[0] ?? '').toLowerCase();
}

export function isAutomaticReply(headers: readonly MessageHeader[]): boolean {
  const autoSubmitted = headerValue(headers, 'auto-submitted');
  if (autoSubmitted !== undefined) {
    const token = firstToken(autoSubmitted);
    if (token === 'no') return false;
    if (token === 'auto-replied') return true;
  }
  for (const name of ['x-autoreply', 'x-autorespond']) {
    const value = headerValue(headers, name);
    if (value !== undefined && value !== '' && !FALSE_VALUE.test(value)) return true;
  }
  const precedence = headerValue(headers, 'precedence');
  if (precedence !== undefined && firstToken(precedence) === 'auto_reply') return true;
  const subject = headerValue(headers, 'subject');
  return subject !== undefined && OUT_OF_OFFICE_SUBJECT.test(subject);
}
