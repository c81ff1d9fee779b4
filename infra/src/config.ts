import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { defaultTopicNames, prefixedTopicNames, type TopicNames } from './kafka/topics';

/**
 * Where the services are. Each address comes from the environment; without it,
 * the local service that `npm run infra -- up` starts on 127.0.0.1.
 */
export interface ServiceAddresses {
  kafkaBrokers: string[];
  schemaRegistryUrl: string;
  clickhouseUrl: string;
  clickhouseDatabase: string;
  redisUrl: string;
  /**
   * The Kafka topics the apps use: the real ones, or with SENDLINE_TOPIC_PREFIX=<p> their copies `<p>.email.messages`,
   * … (a benchmark runs the apps on topics of its own, so a running `npm start` never processes its traffic).
   */
  topics: TopicNames;
}

export function serviceAddresses(env: NodeJS.ProcessEnv = process.env): ServiceAddresses {
  return {
    kafkaBrokers: (env.KAFKA_BROKERS ?? '127.0.0.1:9092')
      .split(',')
      .map((broker) => broker.trim())
      .filter(Boolean),
    schemaRegistryUrl: env.SCHEMA_REGISTRY_URL ?? 'http://127.0.0.1:8081/apis/ccompat/v7',
    clickhouseUrl: env.CLICKHOUSE_URL ?? 'http://127.0.0.1:8123',
    clickhouseDatabase: env.CLICKHOUSE_DATABASE ?? 'sendline',
    redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    topics: env.SENDLINE_TOPIC_PREFIX ? prefixedTopicNames(env.SENDLINE_TOPIC_PREFIX) : defaultTopicNames,
  };
}

/**
 * This copy of an app among its copies: SENDLINE_INSTANCE_ID when set (letters, digits, `.`, `_`, `-`; at most 64),
 * else `<host name>-<pid>`, which no two running processes share. Every copy of an app joins the same consumer groups
 * (that is how they split the partitions); this id tells them apart in Kafka (client id, hence member id in a
 * group's description) and in their logs. A process manager that restarts a copy in place (systemd, Kubernetes) may
 * set it to the unit's or the pod's name; two copies running at once must never share one.
 */
export function instanceIdFromEnv(env: NodeJS.ProcessEnv = process.env, pid = process.pid): string {
  const set = env.SENDLINE_INSTANCE_ID?.trim();
  if (set) {
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(set)) {
      throw new Error(
        `SENDLINE_INSTANCE_ID must be 1 to 64 letters, digits, '.', '_' or '-', not ${JSON.stringify(set)}`,
      );
    }
    return set;
  }
  return `${hostname()
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 48)}-${pid}`;
}

/**
 * An app's Kafka client id: `<app>-<instance id>` (see `instanceIdFromEnv`), plus `-w<n>` for the n-th worker of an
 * app that runs several processes under one instance (the API's workers). Kafka's logs, quotas and a group's
 * description (`admin describe-groups`) then name the copy that holds each partition.
 */
export function kafkaClientId(app: string, env: NodeJS.ProcessEnv = process.env, worker?: number): string {
  return `${app}-${instanceIdFromEnv(env)}${worker === undefined ? '' : `-w${worker}`}`;
}

/**
 * The service's mail host: the MX of every return path (where bounces and complaints come back), unless
 * SENDLINE_MAIL_HOST names another.
 */
export const DEFAULT_MAIL_HOST = 'mail.sendline.dev';

/** The mail host the DNS records to publish name: SENDLINE_MAIL_HOST, else DEFAULT_MAIL_HOST. */
export function mailHostFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return env.SENDLINE_MAIL_HOST ?? DEFAULT_MAIL_HOST;
}

/**
 * The domain a return path's SPF record includes (`v=spf1 include:<it> -all`): SENDLINE_SPF_DOMAIN, else the mail
 * host. Its own SPF record lists the addresses the service sends from; a deployment whose senders and MX differ
 * publishes that list at a name of its own (as SES's amazonses.com) and sets it here.
 */
export function spfDomainFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return env.SENDLINE_SPF_DOMAIN || mailHostFromEnv(env);
}

/**
 * Where mail comes back: every message goes out with envelope sender `b.{token}@{return-path domain}`
 * (crypto/returnPathToken.ts), and our MX (apps/mx) takes mail for those addresses only. The return-path domains are
 * the service's own (SENDLINE_RETURN_PATH_DOMAIN: the envelope sender's domain of mail from a domain whose return
 * path is not verified yet, as Postmark and SES do) and each sending domain's own `{label}.{domain}`, whose MX
 * record points at our MX.
 */
export const DEFAULT_RETURN_PATH_DOMAIN = 'bounces.sendline.dev';
/** The label of a new domain's return path, `<label>.<domain>`, unless SENDLINE_RETURN_PATH_LABEL names another. */
export const DEFAULT_RETURN_PATH_LABEL = 'bounces';

export interface ReturnPathNames {
  /** The service's own return-path domain, lowercase. */
  domain: string;
  /** The label put before a sending domain to make its return-path domain, lowercase. */
  label: string;
}

const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export function returnPathNamesFromEnv(env: NodeJS.ProcessEnv = process.env): ReturnPathNames {
  const domain = (env.SENDLINE_RETURN_PATH_DOMAIN || DEFAULT_RETURN_PATH_DOMAIN).trim().toLowerCase();
  const label = (env.SENDLINE_RETURN_PATH_LABEL || DEFAULT_RETURN_PATH_LABEL).trim().toLowerCase();
  if (!domain.split('.').every((part) => DNS_LABEL.test(part))) {
    throw new Error(`SENDLINE_RETURN_PATH_DOMAIN must be a domain name, not ${JSON.stringify(domain)}`);
  }
  if (!DNS_LABEL.test(label)) {
    throw new Error(`SENDLINE_RETURN_PATH_LABEL must be one DNS label, not ${JSON.stringify(label)}`);
  }
  return { domain, label };
}

/**
 * The return path label given to domains added from now on (and to domains added before return paths, when
 * assigned one). A domain keeps the host it got: changing the label moves no domain.
 */
export function returnPathLabelFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return returnPathNamesFromEnv(env).label;
}

/** The service's own return-path domain (SENDLINE_RETURN_PATH_DOMAIN, else DEFAULT_RETURN_PATH_DOMAIN). */
export function returnPathDomainFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return returnPathNamesFromEnv(env).domain;
}

/** The return-path domain of a sending domain: `{label}.{domain}`, lowercase. */
export function returnPathDomainOf(sendingDomain: string, settings: Pick<ReturnPathNames, 'label'>): string {
  return `${settings.label}.${sendingDomain.toLowerCase()}`;
}

/** The service's inbound domain: every organization's inbound address is `{hash}@` it (Postmark's inbound.postmarkapp.com). */
export const DEFAULT_INBOUND_DOMAIN = 'inbound.sendline.dev';

/** SENDLINE_INBOUND_DOMAIN, else DEFAULT_INBOUND_DOMAIN; lowercase, checked. */
export function inboundDomainFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const domain = (env.SENDLINE_INBOUND_DOMAIN || DEFAULT_INBOUND_DOMAIN).trim().toLowerCase();
  if (!domain.split('.').every((part) => DNS_LABEL.test(part))) {
    throw new Error(`SENDLINE_INBOUND_DOMAIN must be a domain name, not ${JSON.stringify(domain)}`);
  }
  return domain;
}

/** The From of system mail (sign-in links, notices), unless SENDLINE_SYSTEM_SENDER names another. */
export const DEFAULT_SYSTEM_SENDER = 'Sendline <no-reply@system.sendline.test>';

/** The system sender: SENDLINE_SYSTEM_SENDER, else DEFAULT_SYSTEM_SENDER. */
export function systemSenderFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return env.SENDLINE_SYSTEM_SENDER || DEFAULT_SYSTEM_SENDER;
}

/** Where the web console is served (put in its sign-in links): SENDLINE_CONSOLE_URL, else the API on loopback. */
export function consoleUrlFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return env.SENDLINE_CONSOLE_URL || `http://127.0.0.1:${env.SENDLINE_API_PORT || env.PORT || 3000}`;
}

/** Defined (true) by `npm run build` in the compiled apps (infra/local/src/build.ts); undeclared under tsx. */
declare const __COMPILED__: boolean | undefined;

/** Whether this code runs as a compiled app (`node apps/<app>/dist/main.js`), not from its TypeScript sources. */
export const runsCompiled = typeof __COMPILED__ !== 'undefined' && __COMPILED__ === true;

/**
 * Reads `.local/services.env` (written by `npm run infra -- up`: the local services'
 * addresses and the development secret key) into the environment, without
 * overriding anything already set. Lets `npm run admin`, the apps and the benches
 * run from the repository root without sourcing the file first. A compiled app (production) never reads it:
 * its settings come from its environment only (docs/operations.md), whatever directory it is started in.
 */
export function loadLocalServicesEnv(
  file = join(process.cwd(), '.local', 'services.env'),
  env: NodeJS.ProcessEnv = process.env,
  compiled = runsCompiled,
): void {
  if (compiled || !existsSync(file)) return;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (match && env[match[1]!] === undefined) env[match[1]!] = match[2];
  }
}

/**
 * A whole-number setting: `fallback` when unset or blank, else the number, at least `min` (and at most `max` when
 * given); anything else stops the app at start with a message naming the variable. Every app's numeric settings.
 */
export function wholeNumberSetting(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min = 1,
  max?: number,
): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || (max !== undefined && value > max)) {
    const range = max === undefined ? `≥ ${min}` : `from ${min} to ${max}`;
    throw new Error(`${name} must be a whole number ${range}, not ${JSON.stringify(raw)}`);
  }
  return value;
}
