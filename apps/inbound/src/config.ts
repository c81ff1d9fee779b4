import {
  dnsResolverOptionsFromEnv,
  inboundDomainFromEnv,
  mailHostFromEnv,
  wholeNumberSetting,
  type DnsResolverOptions,
} from '@sendline/infra';

/** The inbound reader's settings, from the environment. */
export interface InboundConfig {
  groupId: string;
  sessionTimeoutMs: number;
  inboundDomain: string;
  /** Our name in Authentication-Results: the MX's (SENDLINE_MX_NAME, else the mail host). */
  mta: string;
  dns: DnsResolverOptions;
}

/**
 * | variable                            | default         | meaning                                  |
 * |-------------------------------------|-----------------|------------------------------------------|
 * | SENDLINE_INBOUND_GROUP              | inbound-reader  | the consumer group of mail.received      |
 * | SENDLINE_INBOUND_SESSION_TIMEOUT_MS | 30000           | consumer session timeout (at least 6000) |
 * | SENDLINE_INBOUND_DOMAIN             | inbound.sendline.dev | the service's inbound domain        |
 * | SENDLINE_DNS_SERVERS                | the system's    | where SPF, DKIM and DMARC are looked up  |
 */
export function inboundConfigFromEnv(env: NodeJS.ProcessEnv = process.env): InboundConfig {
  return {
    groupId: env.SENDLINE_INBOUND_GROUP?.trim() || 'inbound-reader',
    sessionTimeoutMs: wholeNumberSetting(env, 'SENDLINE_INBOUND_SESSION_TIMEOUT_MS', 30_000, 6000),
    inboundDomain: inboundDomainFromEnv(env),
    mta: env.SENDLINE_MX_NAME?.trim() || mailHostFromEnv(env),
    dns: dnsResolverOptionsFromEnv(env),
  };
}
