import { describe, expect, it } from 'vitest';
import { senderConfigFromEnv } from '../../src/config';
import { eventIdFor } from '../../src/ids';
import { Limiter } from '../../src/limiter';

describe('the sender configuration', () => {
  it('delivers by MX lookup with a 72 hour retry window when nothing is set', () => {
    const config = senderConfigFromEnv({});
    expect(config.relay).toBeUndefined();
    expect(config.mxPort).toBe(25);
    expect(config.groupId).toBe('sender');
    expect(config.retryGroupId).toBe('sender-retries');
    expect(config.startNewGroupsAt).toBe('earliest');
    expect(config.retryPolicy).toMatchObject({ giveUpAfterMs: 72 * 3600_000, initialDelayMs: 60_000 });
  });

  it('relays to the development mail server under npm start (SENDLINE_DEV=1)', () => {
    expect(senderConfigFromEnv({ SENDLINE_DEV: '1' }).relay).toEqual({ host: '127.0.0.1', port: 2525 });
    expect(senderConfigFromEnv({ SENDLINE_DEV: '1', SENDLINE_DEV_SMTP_PORT: '2626' }).relay).toEqual({
      host: '127.0.0.1',
      port: 2626,
    });
    expect(senderConfigFromEnv({ SENDLINE_DEV: '1' }).startNewGroupsAt).toBe('latest');
  });

  it('takes the relay, DNS servers, window and limits from the environment', () => {
    const config = senderConfigFromEnv({
      SENDLINE_SMTP_RELAY: 'smtp.internal:587',
      SENDLINE_DNS_SERVERS: '127.0.0.1:5353, 10.0.0.2',
      SENDLINE_RETRY_WINDOW_MS: '5000',
      SENDLINE_SENDER_CONCURRENCY: '16',
    });
    expect(config.relay).toEqual({ host: 'smtp.internal', port: 587 });
    expect(config.dnsServers).toEqual(['127.0.0.1:5353', '10.0.0.2']);
    expect(config.retryPolicy.giveUpAfterMs).toBe(5000);
    expect(config.concurrency).toBe(16);
  });

  it('sends with the service’s own return-path domain unless SENDLINE_RETURN_PATH_DOMAIN names another', () => {
    expect(senderConfigFromEnv({}).returnPathDomain).toBe('bounces.sendline.dev');
    expect(senderConfigFromEnv({ SENDLINE_RETURN_PATH_DOMAIN: 'RP.Example.com' }).returnPathDomain).toBe(
      'rp.example.com',
    );
    expect(() => senderConfigFromEnv({ SENDLINE_RETURN_PATH_DOMAIN: 'not a domain' })).toThrow(
      /SENDLINE_RETURN_PATH_DOMAIN/,
    );
  });

  it('refuses values that are not what they should be', () => {
    expect(() => senderConfigFromEnv({ SENDLINE_SENDER_CONCURRENCY: 'many' })).toThrow(/SENDLINE_SENDER_CONCURRENCY/);
    expect(() => senderConfigFromEnv({ SENDLINE_SENDER_START: 'middle' })).toThrow(/SENDLINE_SENDER_START/);
    expect(() => senderConfigFromEnv({ SENDLINE_SMTP_RELAY: 'host:0' })).toThrow(/host:port/);
  });
});

describe('event ids of decided outcomes', () => {
  it('are the same UUID each time the same outcome is decided, and differ between outcomes', () => {
    const id = eventIdFor('m-1', 'ann@example.com', 'Delivered', 1);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(eventIdFor('m-1', 'ann@example.com', 'Delivered', 1)).toBe(id);
    expect(eventIdFor('m-1', 'ann@example.com', 'Deferred', 1)).not.toBe(id);
    expect(eventIdFor('m-1', 'ann@example.com', 'Delivered', 2)).not.toBe(id);
  });
});

describe('the delivery limiter', () => {
  it('never runs more tasks at once than its limit', async () => {
    const limiter = new Limiter(3);
    let running = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 12 }, () =>
        limiter.run(async () => {
          running++;
          most = Math.max(most, running);
          await new Promise((resolve) => setTimeout(resolve, 5));
          running--;
        }),
      ),
    );
    expect(most).toBe(3);
  });
});
