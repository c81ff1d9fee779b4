import type { MessageAcceptedData } from '@sendline/domain';

/** An accepted message as the sender composes it: one text part from a shop to Ann, unless `overrides` say more. */
export function acceptedMessage(overrides: Partial<MessageAcceptedData> = {}): MessageAcceptedData {
  return {
    messageId: '0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d',
    from: { email: 'orders@shop.example.test', name: 'Shop' },
    to: [{ email: 'ann@example.net', name: 'Ann' }],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: 'Your receipt',
    textBody: 'Thanks for your order.',
    headers: [],
    metadata: {},
    attachments: [],
    trackOpens: false,
    trackLinks: 'None',
    messageStream: 'outbound',
    sizeBytes: 20,
    activeRecipients: ['ann@example.net'],
    suppressedRecipients: [],
    submittedAt: Date.UTC(2026, 10, 1),
    ...overrides,
  } as MessageAcceptedData;
}

const base64Of = (bytes: Buffer) => bytes.toString('base64');

/**
 * Accepted messages of every shape the composer writes (the overrides of `acceptedMessage`): bodies and none,
 * whitespace where quoted-printable treats it apart, folded and encoded headers, attachments and inline parts.
 */
export const messageShapes: [string, Partial<MessageAcceptedData>][] = [
  ['a short text message', {}],
  ['an HTML body only', { textBody: undefined, htmlBody: '<h1>Sign-in code</h1><p>493 201</p>' }],
  ['no body at all', { textBody: undefined }],
  ['an empty text body', { textBody: '' }],
  ['a body ending in whitespace', { textBody: 'Thank you for your order. '.repeat(8) }],
  ['only whitespace', { textBody: ' \t  ' }],
  [
    'non-ASCII names, subject and body, long lines, many recipients (folded headers)',
    {
      from: { email: 'orders@shop.example.test', name: 'Boutique Élodie' },
      to: Array.from({ length: 12 }, (_, i) => ({ email: `customer${i}@example.net`, name: `Kundin Nr. ${i} Müller` })),
      subject: 'Ihre Bestellung – Übersicht und Rechnung für den Monat November, mit allen Positionen',
      textBody: `Grüße aus Köln.  Zeile mit   Leerzeichen   \n\n${'Lorem ipsum dolor sit amet '.repeat(30)}\n\n\n`,
      htmlBody: `<p>${'Привет, мир! '.repeat(40)}</p>`,
    },
  ],
  [
    'text and HTML, Cc, Bcc, Reply-To, custom headers, attachments and an inline image',
    {
      cc: [{ email: 'carl@example.net' }],
      bcc: [{ email: 'bea@example.net' }],
      replyTo: [{ email: 'help@shop.example.test', name: 'Help' }],
      htmlBody: '<p>Thanks <img src="cid:logo"></p>',
      headers: [
        { name: 'X-Order', value: '42' },
        { name: 'List-Unsubscribe', value: '<mailto:leave@shop.example.test>' },
      ],
      attachments: [
        { name: 'receipt.txt', content: base64Of(Buffer.from('Order 42\n')), contentType: 'text/plain' },
        { name: 'notes.txt', content: base64Of(Buffer.from('Grüße \r\nline\rCR  ')), contentType: 'text/plain' },
        { name: 'empty.bin', content: '', contentType: 'application/octet-stream' },
        { name: 'logo.png', content: base64Of(Buffer.from('png')), contentType: 'image/png', contentId: 'cid:logo' },
      ],
    },
  ],
  [
    'attachments of every length modulo a base64 line (57 bytes)',
    {
      attachments: Array.from({ length: 6 }, (_, i) => ({
        name: `part${i}.bin`,
        content: base64Of(Buffer.alloc(57 * 3 + i * 11, i + 1)),
        contentType: 'application/pdf',
      })),
    },
  ],
];
