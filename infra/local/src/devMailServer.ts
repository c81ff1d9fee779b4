/**
 * The development mail server: a real SMTP server on loopback that the sender delivers to in development
 * (`npm start` runs it, and the sender's relay points at it when SENDLINE_DEV=1), so that mail sent
 * through the API can be seen arriving.
 *
 *   SMTP   127.0.0.1:2525 (SENDLINE_DEV_SMTP_PORT)   answers by recipient address (below), checks DKIM
 *   HTTP   127.0.0.1:2580 (SENDLINE_DEV_MAIL_HTTP_PORT)
 *            GET /messages[?to=<address>&limit=<n>]   the messages received since it started, newest first
 *            GET /messages/<id>                       one message, with its text
 *   file   .local/mail/messages.jsonl (SENDLINE_DEV_MAIL_DIR)   one JSON line per message, kept across runs
 *
 *   npm run mail -- list [--limit 20]   lists the messages in the file (the server need not run)
 *   npm run mail -- show <id>           prints one message as received
 *
 * Answers by the recipient's local part (case-insensitive): `hardbounce…` 550 5.1.1, `policy…` 550 5.7.1,
 * `mailboxfull…` 552 5.2.2, `defer<N>+…` 450 the first N times then 250, `defer…` 450 always,
 * `drop…` the connection is dropped, `bouncelater…` 250 and a second later a DSN (5.1.1 user unknown),
 * `spamcomplaint…` 250 and a second later an ARF abuse report, anything else 250.
 *
 * The DSN and the ARF report go from `<>` to the message's envelope sender (its return path, `b.<token>@…`) through
 * our MX (apps/mx): SENDLINE_MX_ADDRESS (`host:port`), else 127.0.0.1:SENDLINE_MX_PORT (`npm start` sets 2526),
 * else the `mx` of .local/credentials.json. Without any, the two modes only answer 250.
 *
 * DKIM public keys come from the accounts view (the key each domain was added with), else from the
 * development DNS server (what `domain add` published in .local/dns-zone.json).
 */
import { createServer } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AccountsView,
  createRedis,
  createTxtResolver,
  devDnsSettings,
  dkimRecordsFromAccounts,
  dkimRecordsFromDns,
  firstDkimRecord,
  loadLocalServicesEnv,
  serviceAddresses,
  TestMailServer,
  type ReceivedMessage,
  type SentReport,
} from '@sendline/infra';

loadLocalServicesEnv();
const smtpPort = Number(process.env.SENDLINE_DEV_SMTP_PORT || 2525);
const httpPort = Number(process.env.SENDLINE_DEV_MAIL_HTTP_PORT || 2580);
const directory = process.env.SENDLINE_DEV_MAIL_DIR || join('.local', 'mail');
const journalFile = join(directory, 'messages.jsonl');

/** Where bounces and complaints are sent back: our MX's `host:port` (see the module note), or undefined. */
function mxAddress(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.SENDLINE_MX_ADDRESS) return env.SENDLINE_MX_ADDRESS;
  if (env.SENDLINE_MX_PORT && env.SENDLINE_MX_PORT !== '0') return `127.0.0.1:${env.SENDLINE_MX_PORT}`;
  const credentials = join('.local', 'credentials.json');
  if (!existsSync(credentials)) return undefined;
  try {
    const mx = (JSON.parse(readFileSync(credentials, 'utf8')) as { mx?: unknown }).mx;
    return typeof mx === 'string' ? mx : undefined;
  } catch {
    return undefined;
  }
}

type JournalEntry = Omit<ReceivedMessage, 'raw'> & { raw?: string };

function readJournal(): JournalEntry[] {
  if (!existsSync(journalFile)) return [];
  return readFileSync(journalFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as JournalEntry);
}

function summary(message: JournalEntry) {
  const { raw: _raw, headers: _headers, ...rest } = message;
  return rest;
}

const [command, ...args] = process.argv.slice(2);

if (command === 'list') {
  const limitAt = args.indexOf('--limit');
  const limit = limitAt >= 0 ? Number(args[limitAt + 1]) : 20;
  const messages = readJournal().slice(-limit).reverse();
  if (messages.length === 0) console.log(`no mail yet (${journalFile})`);
  for (const m of messages) {
    console.log(
      [
        new Date(m.receivedAt).toISOString(),
        m.id,
        `from ${m.envelopeFrom}`,
        `to ${m.recipients.join(', ')}`,
        `dkim ${m.dkim.result}${m.dkim.domain ? ` (${m.dkim.domain})` : ''}`,
        `subject ${m.subject ?? ''}`,
      ].join('  '),
    );
  }
  process.exit(0);
} else if (command === 'show') {
  const message = readJournal().find((m) => m.id === args[0]);
  if (!message) {
    console.error(`no message ${args[0]} in ${journalFile}`);
    process.exit(1);
  }
  console.log(message.raw ?? JSON.stringify(summary(message), null, 2));
  process.exit(0);
} else if (command !== undefined) {
  console.error('usage: devMailServer.ts [list [--limit N] | show <id>]   (no argument: run the server)');
  process.exit(2);
}

const log = (fields: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), logger: 'dev-mail-server', ...fields })}\n`);

const redis = createRedis(serviceAddresses().redisUrl);
const dns = devDnsSettings();
const mx = mxAddress();
const server = await new TestMailServer({
  port: smtpPort,
  name: 'mail.sendline.dev',
  dkimRecords: firstDkimRecord(
    dkimRecordsFromAccounts(new AccountsView(redis)),
    dkimRecordsFromDns(createTxtResolver({ servers: [dns.address], timeoutMs: 500, tries: 1 })),
  ),
  journalFile,
  journalRaw: true,
  maxKept: 1000,
  onMessage: (m) =>
    log({
      msg: 'received',
      id: m.id,
      from: m.envelopeFrom,
      to: m.recipients,
      subject: m.subject,
      dkim: m.dkim.result,
    }),
  ...(mx
    ? {
        reports: {
          mx,
          onReport: (report: SentReport) =>
            log({
              msg: report.error === undefined ? 'report sent' : 'report not sent',
              kind: report.kind,
              to: report.to,
              about: report.about,
              via: mx,
              ...(report.error === undefined ? { response: report.response } : { error: report.error }),
              attempts: report.attempts,
            }),
        },
      }
    : {}),
}).start();

const http = createServer((request, response) => {
  const url = new URL(request.url ?? '/', `http://127.0.0.1:${httpPort}`);
  const json = (status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body, null, 2));
  };
  if (request.method !== 'GET') return json(405, { error: 'GET only' });
  if (url.pathname === '/health') return json(200, { ok: true, received: server.received });
  const messages = server
    .messages()
    .reverse()
    .map((m) => ({ ...m, raw: m.raw?.toString('utf8') }));
  if (url.pathname === '/messages') {
    const to = url.searchParams.get('to')?.toLowerCase();
    const limit = Number(url.searchParams.get('limit') ?? 100);
    const found = messages.filter((m) => !to || m.recipients.some((r) => r.toLowerCase() === to));
    return json(200, { total: found.length, messages: found.slice(0, limit).map(summary) });
  }
  const one = /^\/messages\/([^/]+)$/.exec(url.pathname);
  if (one) {
    const message = messages.find((m) => m.id === one[1]);
    return message ? json(200, message) : json(404, { error: `no message ${one[1]}` });
  }
  return json(404, { error: 'try GET /messages' });
});
await new Promise<void>((resolve) => http.listen(httpPort, '127.0.0.1', resolve));
log({
  msg: 'listening',
  smtp: server.address,
  http: `http://127.0.0.1:${httpPort}/messages`,
  journal: journalFile,
  reportsVia: mx ?? 'none (bouncelater and spamcomplaint only answer 250)',
});

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  log({ msg: 'stopping', signal });
  http.close();
  await server.stop();
  redis.disconnect();
  process.exit(0);
}
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));
