import { describe, expect, it } from 'vitest';
import { MAX_RECEIVED_MESSAGE_BYTES } from '@sendline/infra';
import { mxConfigFromEnv } from '../../src/config';

describe('the MX configuration', () => {
  it('listens on 127.0.0.1:25 by default, takes 10 MB, offers no STARTTLS', () => {
    const config = mxConfigFromEnv({});
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 25,
      maxBytes: 10 * 1024 * 1024,
      name: 'mail.sendline.dev',
    });
    expect(config.tls).toBeUndefined();
    expect(config.returnPath).toEqual({ domain: 'bounces.sendline.dev', label: 'bounces' });
  });

  it('takes port 0 (a free one) and both TLS files', () => {
    const config = mxConfigFromEnv({
      SENDLINE_MX_PORT: '0',
      SENDLINE_MX_TLS_CERT: 'c.pem',
      SENDLINE_MX_TLS_KEY: 'k.pem',
    });
    expect(config.port).toBe(0);
    expect(config.tls).toEqual({ certFile: 'c.pem', keyFile: 'k.pem' });
  });

  it('refuses one TLS file without the other', () => {
    expect(() => mxConfigFromEnv({ SENDLINE_MX_TLS_CERT: 'c.pem' })).toThrow(/go together/);
  });

  it('refuses a size limit the topic could not hold', () => {
    expect(() => mxConfigFromEnv({ SENDLINE_MX_MAX_BYTES: String(MAX_RECEIVED_MESSAGE_BYTES + 1) })).toThrow(
      /SENDLINE_MX_MAX_BYTES/,
    );
  });
});
