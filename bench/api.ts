/**
 * npm run bench:api — HTTP throughput of the send path on this machine.
 *
 * Starts the real API (apps/api/src/main.ts) and a bare fastify server that
 * answers POST /v1/email with the same JSON and does nothing else, each as its own
 * process on 127.0.0.1, then drives them with autocannon (loopback only, bounded
 * in time): the bare route, then single sends and 500-message batches against the
 * API with one worker process and with BENCH_API_WORKERS (default 2)
 * (SENDLINE_API_WORKERS). Prints requests/s, accepted messages/s, p50/p99 latency
 * and the single-send ratio. Then the same with a template (POST /v1/email/withTemplate and batchWithTemplates of
 * 500: a layout with CSS, an each over the model, the CSS inlined), and the time one render and one inlining take in
 * this process. The messages go to Kafka for real, on topics of the
 * run's own (SENDLINE_TOPIC_PREFIX=bench-<run>), which no sender reads.
 * BENCH_DURATION_S (10), BENCH_CONNECTIONS (32), BENCH_PROFILE.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { inlineCss, TemplatesService } from '@sendline/application';
import { randomUUID } from 'node:crypto';
import autocannon, { type Result } from 'autocannon';
import {
  AccountsView,
  createRedis,
  EventStore,
  loadLocalServicesEnv,
  serviceAddresses,
  TemplatesView,
  topicConfigs,
} from '@sendline/infra';
import { createTestOrganization } from '../test/support/api';
import { PROFILE_FLAGS, waitForHttp } from './support';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const API_PORT = 3901;
const BARE_PORT = 3902;
/** The second run's API processes (SENDLINE_API_WORKERS); the first run has one. */
const WORKERS = Number(process.env.BENCH_API_WORKERS ?? 2);

function startProcess(script: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [...PROFILE_FLAGS, '--import', 'tsx', script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

function run(title: string, options: autocannon.Options): Promise<Result> {
  return new Promise((resolve, reject) => {
    autocannon(
      { ...options, title, duration: DURATION_S, connections: options.connections ?? CONNECTIONS },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

function row(name: string, result: Result, messagesPerRequest: number) {
  const okRequests = result['2xx'];
  const rate = okRequests / (result.duration || DURATION_S);
  return {
    name,
    'requests/s': Math.round(rate),
    'messages/s': Math.round(rate * messagesPerRequest),
    'p50 ms': result.latency.p50,
    'p99 ms': result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

loadLocalServicesEnv();
// The API processes append to topics of this run's own (they inherit the variable), so a running `npm start`'s
// sender never delivers the benchmark's messages.
process.env.SENDLINE_TOPIC_PREFIX = `bench-${randomUUID().slice(0, 8)}`;
const addresses = serviceAddresses();
const redis = createRedis(addresses.redisUrl);
const store = new EventStore({
  brokers: addresses.kafkaBrokers,
  registryUrl: addresses.schemaRegistryUrl,
  clientId: 'bench-setup',
  topics: addresses.topics,
});
await store.ensureTopics(topicConfigs(addresses.topics));
const org = await createTestOrganization({ store, accounts: new AccountsView(redis) });
// A receipt inside a branded layout: what a template send renders and inlines per message.
const templates = new TemplatesService({ store, view: new TemplatesView(redis) });
await templates.create(org.organizationId, {
  name: 'Bench layout',
  alias: 'bench-layout',
  templateType: 'Layout',
  htmlBody:
    '<html><head><style>body { font-family: sans-serif; } h1 { color: #ff6600; } td.item { padding: 4px; } ' +
    'td.price { text-align: right; } .footer { font-size: 10px; color: #888; }</style></head>' +
    '<body>{{{ @content }}}<p class="footer">Acme Ltd, 1 Main Street</p></body></html>',
  textBody: '{{{ @content }}}\n-- Acme Ltd',
});
await templates.create(org.organizationId, {
  name: 'Bench receipt',
  alias: 'bench-receipt',
  subject: 'Your receipt for order {{ order.id }}',
  htmlBody:
    '<h1>Thanks, {{ name }}</h1><table>{{#each order.items}}<tr><td class="item">{{ title }}</td>' +
    '<td class="price">{{ price }}</td></tr>{{/each}}</table>',
  textBody: 'Thanks, {{ name }}{{#each order.items}}\n{{ title }}: {{ price }}{{/each}}',
  layoutTemplate: 'bench-layout',
});
const templateModel = {
  name: 'Ann',
  order: { id: 42, items: Array.from({ length: 5 }, (_, i) => ({ title: `Item ${i}`, price: `$${i + 1}.00` })) },
};
const library = await templates.libraryFor(org.organizationId, ['bench-receipt']);
const timeIt = (times: number, work: () => unknown) => {
  const start = performance.now();
  for (let i = 0; i < times; i++) work();
  return ((performance.now() - start) * 1000) / times;
};
timeIt(200, () => templates.render(library, { templateAlias: 'bench-receipt', templateModel }));
const renderUs = timeIt(2000, () =>
  templates.render(library, { templateAlias: 'bench-receipt', templateModel, inlineCss: false }),
);
const renderedHtml = templates.render(library, { templateAlias: 'bench-receipt', templateModel, inlineCss: false });
const inlineUs = timeIt(500, () => inlineCss(renderedHtml.htmlBody ?? ''));
await store.disconnect();
redis.disconnect();

const bare = startProcess('bench/bareServer.ts', { BARE_PORT: String(BARE_PORT) });
const message = (i: number) => ({
  From: `Bench <bench@${org.domain}>`,
  To: `r${i}@example.net`,
  Subject: 'Your receipt',
  TextBody: 'Thank you for your order. '.repeat(8),
  Tag: 'bench',
});
const single = JSON.stringify(message(1));
const batch = JSON.stringify(Array.from({ length: 500 }, (_, i) => message(i)));
const templated = (i: number) => ({
  From: `Bench <bench@${org.domain}>`,
  To: `r${i}@example.net`,
  TemplateAlias: 'bench-receipt',
  TemplateModel: templateModel,
  Tag: 'bench',
});
const singleTemplated = JSON.stringify(templated(1));
const batchTemplated = JSON.stringify({ Messages: Array.from({ length: 500 }, (_, i) => templated(i)) });
const headers = { 'content-type': 'application/json', authorization: `Bearer ${org.liveKey}` };
const results = [];
let bareRate: number;
let best = { single: 0, batch: 0 };
try {
  await waitForHttp(`http://127.0.0.1:${BARE_PORT}/healthz`);
  const bareResult = await run('bare route', {
    url: `http://127.0.0.1:${BARE_PORT}/v1/email`,
    method: 'POST',
    headers,
    body: single,
  });
  bareRate = bareResult['2xx'] / (bareResult.duration || DURATION_S);
  results.push(row('bare fastify route (same JSON, no Kafka/Redis)', bareResult, 1));
} finally {
  bare.kill('SIGTERM');
}

// The API with one worker, then with WORKERS workers (SENDLINE_API_WORKERS).
for (const workers of [1, WORKERS]) {
  const api = startProcess('apps/api/src/main.ts', {
    SENDLINE_API_PORT: String(API_PORT),
    SENDLINE_API_WORKERS: String(workers),
    LOG_LEVEL: 'warn',
  });
  try {
    await waitForHttp(`http://127.0.0.1:${API_PORT}/healthz`);
    // Warm up (JIT, connections, schema registration) before measuring.
    await run('warm-up', {
      url: `http://127.0.0.1:${API_PORT}/v1/email`,
      method: 'POST',
      headers,
      body: single,
      duration: 2,
      connections: 4,
    });
    const singleResult = await run('single sends', {
      url: `http://127.0.0.1:${API_PORT}/v1/email`,
      method: 'POST',
      headers,
      body: single,
    });
    const singleRow = row(`POST /v1/email (single), ${workers} worker(s)`, singleResult, 1);
    results.push(singleRow);
    const batchResult = await run('batches of 500', {
      url: `http://127.0.0.1:${API_PORT}/v1/email/batch`,
      method: 'POST',
      headers,
      body: batch,
      connections: 4,
    });
    const batchRow = row(`POST /v1/email/batch (500 messages), ${workers} worker(s)`, batchResult, 500);
    results.push(batchRow);
    const templatedResult = await run('single sends with a template', {
      url: `http://127.0.0.1:${API_PORT}/v1/email/withTemplate`,
      method: 'POST',
      headers,
      body: singleTemplated,
    });
    results.push(row(`POST /v1/email/withTemplate (single), ${workers} worker(s)`, templatedResult, 1));
    const templatedBatch = await run('batches of 500 with templates', {
      url: `http://127.0.0.1:${API_PORT}/v1/email/batchWithTemplates`,
      method: 'POST',
      headers,
      body: batchTemplated,
      connections: 4,
    });
    results.push(row(`POST /v1/email/batchWithTemplates (500 messages), ${workers} worker(s)`, templatedBatch, 500));
    best = {
      single: Math.max(best.single, singleRow['requests/s']),
      batch: Math.max(best.batch, batchRow['messages/s']),
    };
  } finally {
    api.kill('SIGTERM');
    await new Promise((resolve) => api.once('exit', resolve));
  }
}

console.log(
  `\nbench:api — ${DURATION_S}s per run, ${CONNECTIONS} connections (batches: 4), loopback, ${new Date().toISOString()}`,
);
console.table(results);
console.log(
  `single sends: best ${best.single}/s, ${((best.single / Math.max(1, bareRate)) * 100).toFixed(1)}% of the bare route's rate (target ≥ 40%)`,
);
console.log(`batches: best ${best.batch} accepted messages/s (target ≥ 20,000)`);
console.log(
  `a template (layout, 5 items): render ${renderUs.toFixed(0)} µs, CSS inlining ${inlineUs.toFixed(0)} µs, in this process`,
);
process.exit(0);
