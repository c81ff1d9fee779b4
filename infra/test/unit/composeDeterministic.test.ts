import type { MessageAcceptedData } from '@sendline/domain';
import { describe, expect, it } from 'vitest';
import { composeMessage } from '../../src/smtp/compose';
import { acceptedMessage } from './acceptedMessage';

/**
 * The composer gives the same bytes for the same accepted message (the API shows a message's source by composing
 * it again: GET /v1/messages/outbound/{id}/dump), and other bytes for another message.
 */
/** A message with every kind of part: text and HTML, Cc and Bcc, a custom header, an attachment and an inline image. */
function accepted(messageId: string): MessageAcceptedData {
  return acceptedMessage({
    messageId,
    cc: [{ email: 'carl@example.net' }],
    bcc: [{ email: 'bea@example.net' }],
    subject: 'Your receipt',
    textBody: 'Thanks',
    htmlBody: '<p>Thanks <img src="cid:logo"></p>',
    headers: [{ name: 'X-Order', value: '42' }],
    attachments: [
      { name: 'receipt.txt', content: Buffer.from('Order 42').toString('base64'), contentType: 'text/plain' },
      {
        name: 'logo.png',
        content: Buffer.from('png').toString('base64'),
        contentType: 'image/png',
        contentId: 'cid:logo',
      },
    ],
    activeRecipients: ['ann@example.net', 'carl@example.net', 'bea@example.net'],
  });
}

describe('composeMessage', () => {
  it('composes one accepted message to the same bytes every time, MIME boundaries included', async () => {
    const first = await composeMessage(accepted('m-1'));
    const second = await composeMessage(accepted('m-1'));
    expect(first.toString('utf8')).toContain('multipart/mixed');
    expect(second.equals(first)).toBe(true);
  });

  it('gives another message other boundaries', async () => {
    const boundary = (raw: Buffer) => /boundary="([^"]+)"/.exec(raw.toString('utf8'))?.[1];
    const one = boundary(await composeMessage(accepted('m-1')));
    const other = boundary(await composeMessage(accepted('m-2')));
    expect(one).toBeDefined();
    expect(other).not.toBe(one);
  });
});
