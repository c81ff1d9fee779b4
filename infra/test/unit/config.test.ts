import { describe, expect, it } from 'vitest';
import { defaultTopicNames, serviceAddresses } from '../../src';

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
    });
  });
});
