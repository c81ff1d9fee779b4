import { describe, expect, it } from 'vitest';
import { originalMessageOf, repliedMessageOf, sendlineMessageIdOf } from '../../src/returns';

const headers = (fields: Record<string, string>) => Object.entries(fields).map(([name, value]) => ({ name, value }));
const ID = '0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d';

describe('sendlineMessageIdOf', () => {
  it('is the UUID local part of the Message-ID we write, lowercased', () => {
    expect(sendlineMessageIdOf(`<${ID}@shop.example>`)).toBe(ID);
    expect(sendlineMessageIdOf(`<${ID.toUpperCase()}@shop.example>`)).toBe(ID);
    expect(sendlineMessageIdOf(` <${ID}@shop.example> `)).toBe(ID);
  });

  it('is undefined for a Message-ID of another shape', () => {
    expect(sendlineMessageIdOf('<CAH1x=abc@mail.gmail.com>')).toBeUndefined();
    expect(sendlineMessageIdOf(`<x${ID}@shop.example>`)).toBeUndefined();
    expect(sendlineMessageIdOf(`<${ID}>`)).toBeUndefined();
    expect(sendlineMessageIdOf('')).toBeUndefined();
  });
});

describe('originalMessageOf', () => {
  it('reads the Message-ID, our id in it, the Return-Path, To and Subject', () => {
    expect(
      originalMessageOf(
        headers({
          'Return-Path': '<b.token@rp.sendline.example>',
          'message-id': `<${ID}@shop.example>`,
          TO: 'Ann <ann@example.net>,\r\n  bob@example.org',
          Subject: 'Your receipt',
        }),
      ),
    ).toEqual({
      messageId: `<${ID}@shop.example>`,
      sendlineMessageId: ID,
      returnPath: 'b.token@rp.sendline.example',
      to: 'Ann <ann@example.net>, bob@example.org',
      subject: 'Your receipt',
    });
  });

  it('leaves out what is absent or empty', () => {
    expect(originalMessageOf(headers({ Subject: '', 'Return-Path': '<>', 'Message-ID': '<a@b>' }))).toEqual({
      messageId: '<a@b>',
    });
    expect(originalMessageOf([])).toEqual({});
  });
});

describe('repliedMessageOf', () => {
  it("is In-Reply-To's message", () => {
    expect(repliedMessageOf(headers({ 'In-Reply-To': `<${ID}@shop.example> (Your receipt)` }))).toEqual({
      messageId: `<${ID}@shop.example>`,
      sendlineMessageId: ID,
    });
  });

  it('is the last of References without In-Reply-To', () => {
    expect(repliedMessageOf(headers({ References: `<older@x.example>\r\n <${ID}@shop.example>` }))).toEqual({
      messageId: `<${ID}@shop.example>`,
      sendlineMessageId: ID,
    });
  });

  it('is empty without either', () => {
    expect(repliedMessageOf(headers({ Subject: 'x' }))).toEqual({});
  });
});
