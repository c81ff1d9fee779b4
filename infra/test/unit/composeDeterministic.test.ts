import type { MessageAcceptedData } from '@sendline/domain';
import { describe, expect, it } from 'vitest';
import { composeMessage } from '../../src/smtp/compose';

/**
 * The composer gives the same bytes for the same accepted message (the API shows a message's source by composing
 * it again: GET /v1/messages/outbound/{id}/dump), and other bytes for another message.
 */
function accepted(messageId: string): MessageAcceptedData {
  return {
    messageId,
    from: { email: 'orders@shop.example.test', name: 'Shop' },
    to: [{ email: 'ann@example.net', name: 'Ann' }],
    cc: [{ email: 'carl@example.net' }],
    bcc: [{ email: 'bea@example.net' }],
    replyTo: [],
    subject: 'Your receipt',
    textBody: 'Thanks',
    htmlBody: '<p>Thanks <img src="cid:logo"></p>',
    headers: [{ name: 'X-Order', value: '42' }],
    metadata: {},
    attachments: [
      { name: 'receipt.txt', content: Buffer.from('Order 42').toString('base64'), contentType: 'text/plain' },
      {
        name: 'logo.png',
        content: Buffer.from('png').toString('base64'),
        contentType: 'image/png',
        contentId: 'cid:logo',
      },
    ],
    trackOpens: false,
    trackLinks: 'None',
    messageStream: 'outbound',
    sizeBytes: 20,
    activeRecipients: ['ann@example.net', 'carl@example.net', 'bea@example.net'],
    suppressedRecipients: [],
    submittedAt: Date.UTC(2026, 10, 1),
  } as MessageAcceptedData;
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
