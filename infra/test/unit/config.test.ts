import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  defaultTopicNames,
  loadLocalServicesEnv,
  returnPathDomainOf,
  returnPathNamesFromEnv,
  serviceAddresses,
  wholeNumberSetting,
} from '../../src';

describe('serviceAddresses', () => {
  it('names the real topics by default', () => {
    expect(serviceAddresses({}).topics).toEqual(defaultTopicNames);
  });

  it('puts every topic under SENDLINE_TOPIC_PREFIX, so a benchmark’s apps never touch the real ones', () => {
    expect(serviceAddresses({ SENDLINE_TOPIC_PREFIX: 'bench-1a2b' }).topics).toEqual({
      messages: 'bench-1a2b.email.messages',
      suppressions: 'bench-1a2b.email.suppressions',
      accounts: 'bench-1a2b.accounts',
      accountsHistory: 'bench-1a2b.accounts.history',
      deliveryRetries: 'bench-1a2b.email.delivery-retries',
      webhookCalls: 'bench-1a2b.webhooks.calls',
      received: 'bench-1a2b.mail.received',
      inbound: 'bench-1a2b.email.inbound',
    });
  });
});

describe('returnPathNamesFromEnv', () => {
  it('is bounces.sendline.dev and the label bounces by default', () => {
    expect(returnPathNamesFromEnv({})).toEqual({ domain: 'bounces.sendline.dev', label: 'bounces' });
    expect(returnPathDomainOf('Shop.Example', returnPathNamesFromEnv({}))).toBe('bounces.shop.example');
  });

  it('takes SENDLINE_RETURN_PATH_DOMAIN and SENDLINE_RETURN_PATH_LABEL, lowercased', () => {
    expect(
      returnPathNamesFromEnv({ SENDLINE_RETURN_PATH_DOMAIN: 'RP.Mail.example', SENDLINE_RETURN_PATH_LABEL: 'Rp' }),
    ).toEqual({ domain: 'rp.mail.example', label: 'rp' });
  });

  it('refuses a label that is not one DNS label', () => {
    expect(() => returnPathNamesFromEnv({ SENDLINE_RETURN_PATH_LABEL: 'a.b' })).toThrow(/one DNS label/);
  });
});

describe('wholeNumberSetting', () => {
  it('takes the fallback when unset or blank, and the number otherwise', () => {
    expect(wholeNumberSetting({}, 'SENDLINE_X', 7)).toBe(7);
    expect(wholeNumberSetting({ SENDLINE_X: ' ' }, 'SENDLINE_X', 7)).toBe(7);
    expect(wholeNumberSetting({ SENDLINE_X: '12' }, 'SENDLINE_X', 7)).toBe(12);
  });

  it('stops the app with a message naming the variable and its range', () => {
    expect(() => wholeNumberSetting({ SENDLINE_X: 'two' }, 'SENDLINE_X', 7)).toThrow(
      'SENDLINE_X must be a whole number ≥ 1, not "two"',
    );
    expect(() => wholeNumberSetting({ SENDLINE_X: '70000' }, 'SENDLINE_X', 25, 0, 65535)).toThrow(
      'SENDLINE_X must be a whole number from 0 to 65535, not "70000"',
    );
    expect(() => wholeNumberSetting({ SENDLINE_X: '1.5' }, 'SENDLINE_X', 7)).toThrow(/whole number/);
  });
});

describe('loadLocalServicesEnv', () => {
  it('fills what the environment does not set from .local/services.env, except in a compiled app', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sendline-env-'));
    try {
      const file = join(dir, 'services.env');
      writeFileSync(file, 'REDIS_URL=redis://10.0.0.1:6379\nKAFKA_BROKERS=10.0.0.2:9092\n');
      const env: NodeJS.ProcessEnv = { KAFKA_BROKERS: 'kafka:9092' };
      loadLocalServicesEnv(file, env);
      expect(env).toEqual({ KAFKA_BROKERS: 'kafka:9092', REDIS_URL: 'redis://10.0.0.1:6379' });
      const compiled: NodeJS.ProcessEnv = {};
      loadLocalServicesEnv(file, compiled, true);
      expect(compiled).toEqual({});
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
