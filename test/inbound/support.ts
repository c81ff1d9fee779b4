/**
 * What the inbound tests start around the API, the same way each time: the API's inbound services, and the path a
 * mail takes once it reaches us — our MX (taking the organizations' inbound addresses), the inbound reader, the
 * projector's inbound view and the webhooks' caller posting to a loopback receiver that stands for InboundHookUrl.
 *
 * ```ts
 * api = await startTestApi((deps) => ({ store, ...inboundApiServices({ deps, store, clickhouse }) }));
 * pipeline = await startInboundPipeline({ name: 'test-inbound', store, api, clickhouse, dnsServer: dns.address,
 *   accept: (organizationId) => mine.has(organizationId) });
 * await sendToMx(pipeline.mx, { from, to, subject, text });
 * await pipeline.stop(); // in afterAll, before the API and the store
 * ```
 */
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { InboundMessages, InboundSettings, type InboundSettingsOptions } from '@sendline/application';
import type { ApiDependencies } from '@sendline/api';
import { InboundReader } from '@sendline/inbound';
import {
  ActivityQueries,
  ClickHouseInboundReader,
  DEFAULT_INBOUND_DOMAIN,
  secretKeyFromEnv,
  WebhookDeliveryLog,
  type ClickHouseClient,
  type EventStore,
} from '@sendline/infra';
import type { MxServer } from '@sendline/mx';
import { startProjector, type RunningProjector } from '@sendline/projector';
import { Webhooks, webhooksConfigFromEnv } from '@sendline/webhooks';
import { startTestMx } from '../mx/support';
import { noHostResolver, type TestApi } from '../support/api';
import { addresses, uniqueName } from '../support/services';
import { Receiver, type Answer, type ReceivedCall } from '../webhooks/support';

const secretKey = secretKeyFromEnv();

/** The name our MX gives itself in the headers it adds (Authentication-Results). */
export const TEST_MTA = 'mx.sendline.test';

/**
 * The API's inbound server settings and inbound messages on the test's store and ClickHouse. The hook may be plain
 * http on loopback (development mode for the hook only); `settings` adds to or replaces the settings' options.
 */
export function inboundApiServices(options: {
  deps: ApiDependencies;
  store: EventStore;
  clickhouse: ClickHouseClient;
  settings?: Partial<InboundSettingsOptions>;
}): Pick<ApiDependencies, 'inbound' | 'inboundMessages'> {
  const { deps, store, clickhouse } = options;
  return {
    inbound: new InboundSettings({
      store,
      view: deps.accounts,
      secretKey: () => secretKey,
      inboundDomain: DEFAULT_INBOUND_DOMAIN,
      development: true,
      resolveHost: noHostResolver,
      ...options.settings,
    }),
    inboundMessages: new InboundMessages({
      reader: new ClickHouseInboundReader(new ActivityQueries(clickhouse, addresses.clickhouseDatabase)),
      log: new WebhookDeliveryLog(deps.redis),
      store,
      now: Date.now,
    }),
  };
}

export interface InboundPipeline {
  mx: MxServer;
  reader: Awaited<ReturnType<typeof InboundReader.start>>;
  projector: RunningProjector;
  webhooks: Webhooks;
  /** The loopback HTTP server standing for the organizations' InboundHookUrl. */
  receiver: Receiver;
  /** Stops all of it (the API, the store and the DNS server are the caller's). */
  stop(): Promise<void>;
}

/**
 * The path from our MX to the hook on the test's store, consumer groups named after `name`: the MX, the inbound
 * reader (checking SPF, DKIM and DMARC against `dnsServer`), the projector's inbound view, the webhooks' caller
 * (short retries, private addresses allowed, only the organizations `accept` takes) and the receiver answering
 * `answer` (200 by default).
 */
export async function startInboundPipeline(options: {
  name: string;
  store: EventStore;
  api: TestApi;
  clickhouse: ClickHouseClient;
  dnsServer: string;
  accept: (organizationId: string) => boolean;
  answer?: (call: ReceivedCall, calls: readonly ReceivedCall[]) => Answer;
}): Promise<InboundPipeline> {
  const { name, store, api } = options;
  const started: { stop(): Promise<unknown> }[] = [];
  try {
    const projector = await startProjector({
      store,
      redis: api.deps.redis,
      clickhouse: options.clickhouse,
      database: addresses.clickhouseDatabase,
      groupPrefix: uniqueName(name),
      projections: ['inbound'],
      retention: false,
    });
    started.push(projector);
    const mx = await startTestMx({ store, accounts: api.deps.accounts, secretKey, inbound: true });
    started.push(mx);
    const reader = await InboundReader.start({
      store,
      directory: api.deps.accounts,
      inboundDomain: DEFAULT_INBOUND_DOMAIN,
      mta: TEST_MTA,
      dns: { servers: [options.dnsServer], timeoutMs: 1000 },
      groupId: uniqueName(`${name}-reader`),
    });
    started.push(reader.consumer);
    const receiver = await Receiver.start(options.answer);
    started.push({ stop: () => receiver.close() });
    const webhooks = await Webhooks.start({
      store,
      redis: api.deps.redis,
      directory: api.deps.accounts,
      secretKey,
      config: {
        ...webhooksConfigFromEnv({}),
        dispatcherGroupId: uniqueName(`${name}-dispatcher`),
        callerGroupId: uniqueName(`${name}-calls`),
        startNewGroupsAt: 'earliest',
        retryDelaysMs: [300, 600],
        timeoutMs: 1500,
        allowPrivateAddresses: true,
        sessionTimeoutMs: 10_000,
      },
      accept: options.accept,
      directoryCacheMs: 0,
      log: () => undefined,
    });
    started.push(webhooks);
    return { mx, reader, projector, webhooks, receiver, stop: () => stopAll(started) };
  } catch (error) {
    await stopAll(started);
    throw error;
  }
}

/** Stops what was started, the last first; a failing stop does not keep the others running. */
async function stopAll(started: { stop(): Promise<unknown> }[]): Promise<void> {
  for (const part of [...started].reverse()) await part.stop().catch(() => undefined);
}

/** Sends mail to our MX over SMTP as a remote server would; the MX's answer to the message. */
export async function sendToMx(mx: MxServer, mail: SendMailOptions): Promise<string> {
  const [host, port] = mx.address.split(':');
  const transport = nodemailer.createTransport({ host, port: Number(port), secure: false, ignoreTLS: true });
  try {
    return (await transport.sendMail(mail)).response;
  } finally {
    transport.close();
  }
}
