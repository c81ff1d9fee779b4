/**
 * Postmark's clients in other languages against the real API (docs/api.md, "Postmark clients in other languages"), each
 * configured only as that page's matrix says: postmark-python and postmarker (Python), com.postmarkapp:postmark (Java),
 * github.com/mrz1836/postmark (Go) and the `postmark` crate (Rust). Each is driven by a small program in its own
 * language under test/compat/<language>/ (`bash infra/local/bin/compat run <language>`, which installs it first
 * when `npm test` has not), given the address, a key and the addresses to use, and printing one JSON line of what
 * each call gave. postmarker also sends a message built with Python's `email` package (its MIME path: wrapped base64,
 * encoded non-ASCII headers). The postmark.js 5.1.0 client has its own test, test/api/postmarkClient.test.ts; the
 * frameworks' backends theirs (anymail.test.ts, nodemailer.test.ts).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { decideSuppression, initialSuppressionState } from '@sendline/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import PostalMime from 'postal-mime';
import { createTestOrganization, startTestApi, type TestApi, type TestOrganization } from '../support/api';
import { call } from '../support/http';
import { startActivityProjection } from '../support/projector';
import { eventually } from '../support/services';

const run = promisify(execFile);

let api: TestApi;
let org: TestOrganization;
let projection: Awaited<ReturnType<typeof startActivityProjection>>;

beforeAll(async () => {
  api = await startTestApi();
  // A domain under example.com: postmark-python validates addresses, and refuses special-use names such as .test.
  org = await createTestOrganization(api.deps, { domain: `compat-${randomUUID().slice(0, 8)}.example.com` });
  projection = await startActivityProjection(api.deps.store);
});
afterAll(async () => {
  await projection?.stop();
  await api?.close();
});

async function suppress(address: string, reason: 'HardBounce' | 'ManualSuppression'): Promise<void> {
  const events = decideSuppression(
    {
      type: 'AddSuppression',
      data: { emailAddress: address, reason, origin: reason === 'HardBounce' ? 'Recipient' : 'Customer' },
      metadata: { organizationId: org.organizationId, now: Date.now(), eventIds: [randomUUID()] },
    },
    initialSuppressionState(),
  );
  await api.deps.store.append(events);
  await api.deps.suppressions.apply(events as never);
}

interface Failure {
  errorType: string;
  errorCode?: number;
  status?: number;
  message?: string;
}
interface Results {
  client: string;
  version: string;
  send: { errorCode: number; messageId: string; to: string };
  batch: { errorCode: number; messageId: string }[];
  list: { totalCount: number; messageIds: string[] };
  details: { messageId: string; textBody?: string; eventTypes?: string[] } | Failure;
  dump?: { contains: boolean };
  delete?: { status: string };
  dumpAfterDelete?: { contains: boolean };
  wrongKey: Failure;
  inactive: Failure;
  /** postmarker's MIME path: a message built with Python's email package (attachments as wrapped base64). */
  mime?: { errorCode: number; messageId: string; wrapped: boolean; pdfBase64: string };
}

/** What each client is expected to give where they differ: their own error types, and what they lack. */
interface Expected {
  version: string;
  wrongKey: Partial<Failure>;
  inactive: Partial<Failure>;
  suppressions: boolean;
  /** Where the client itself fails to read the message details the service answers: its error. */
  detailsFailure?: { errorType: string; message: string };
}
const CLIENTS: Record<string, Expected> = {
  python: {
    version: '1.0',
    wrongKey: { errorType: 'ClientError' },
    inactive: { errorType: 'ClientError' },
    suppressions: false,
  },
  'python-official': {
    version: '0.4.0',
    wrongKey: { errorType: 'InvalidAPIKeyException', status: 401 },
    inactive: { errorType: 'InactiveRecipientException', status: 422 },
    suppressions: true,
    // Its MessageEventType enum holds Postmark's event types only; the specification shows Accepted and Sent too.
    detailsFailure: { errorType: 'ValidationError', message: "input_value='Accepted'" },
  },
  java: {
    version: '1.11.1',
    wrongKey: { errorType: 'InvalidAPIKeyException' },
    inactive: { errorType: 'InvalidMessageException' },
    suppressions: true,
  },
  go: {
    version: 'v1.9.2',
    wrongKey: { errorType: 'postmark.APIError' },
    inactive: { errorType: 'postmark.APIError' },
    suppressions: true,
  },
  rust: {
    version: '2.0.1',
    wrongKey: { errorType: 'QueryError::Api', status: 401 },
    inactive: { errorType: 'QueryError::Api', status: 422 },
    suppressions: true,
    // It reads `To` of the details as a string; Postmark (and this service) answer an array of { Email, Name }.
    detailsFailure: { errorType: 'QueryError::Json', message: 'invalid type: sequence, expected a string' },
  },
};

async function runClient(language: string, env: Record<string, string>): Promise<Results> {
  const { stdout } = await run('bash', ['infra/local/bin/compat', 'run', language], {
    env: { ...process.env, ...env },
    maxBuffer: 16 * 1024 * 1024,
    timeout: 240_000,
  });
  // The result is the last line; a client's logging may end its own output with colour codes and no newline (the
  // Java client's, when a request was slow), so escape sequences are dropped before it is read.
  const lines = stdout
    // eslint-disable-next-line no-control-regex
    .replace(/\u001b\[[0-9;]*m/g, '')
    .trim()
    .split('\n');
  return JSON.parse(lines[lines.length - 1] ?? '') as Results;
}

describe.each(Object.keys(CLIENTS))('the %s client', (language) => {
  it('sends, sends a batch, lists with filters, reads details and suppressions, and gets its own errors', async () => {
    const expected = CLIENTS[language] as Expected;
    const id = randomUUID().slice(0, 8);
    const to = `${language}-${id}@example.net`;
    const gone = `gone-${language}-${id}@example.net`;
    const dump = `dump-${language}-${id}@example.net`;
    await suppress(gone, 'HardBounce');
    await suppress(dump, 'ManualSuppression');
    const origin = api.baseUrl.replace(/\/v1$/, '');
    const results = await runClient(language, {
      COMPAT_BASE_URL: api.baseUrl,
      COMPAT_ROOT_URL: `${origin}/`,
      COMPAT_HOST: origin.replace(/^http:\/\//, ''),
      COMPAT_KEY: org.liveKey,
      COMPAT_FROM: `sender@${org.domain}`,
      COMPAT_TO: to,
      COMPAT_TAG: `compat-${language}-${id}`,
      COMPAT_GONE: gone,
      COMPAT_DUMP: dump,
    });

    expect(results.version).toBe(expected.version);
    expect(results.send).toEqual({ errorCode: 0, messageId: expect.stringMatching(/^[0-9a-f-]{36}$/), to });
    expect(results.batch.map((result) => result.errorCode)).toEqual([0, 0]);
    const sentIds = [results.send.messageId, ...results.batch.map((result) => result.messageId)];
    expect(new Set(sentIds).size).toBe(3);
    // Filtered by recipient and tag: exactly this run's three messages.
    expect(results.list.totalCount).toBe(3);
    expect([...results.list.messageIds].sort()).toEqual([...sentIds].sort());

    if (expected.detailsFailure) {
      // A limit of the client, not of the wire: listed in docs/api.md's matrix.
      expect(results.details).toMatchObject({
        errorType: expected.detailsFailure.errorType,
        message: expect.stringContaining(expected.detailsFailure.message),
      });
    } else {
      expect(results.details).toMatchObject({ messageId: results.send.messageId, textBody: 'body text' });
      expect((results.details as { eventTypes: string[] }).eventTypes).toContain('Accepted');
    }

    if (expected.suppressions) {
      expect(results.dump).toEqual({ contains: true });
      expect(results.delete).toEqual({ status: 'Deleted' });
      expect(results.dumpAfterDelete).toEqual({ contains: false });
    } else {
      expect(results.dump).toBeUndefined();
    }

    if (language === 'python') {
      // The MIME message: its non-ASCII headers decoded by postmarker, its wrapped base64 taken as the same bytes.
      expect(results.mime).toMatchObject({ errorCode: 0, messageId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
      expect(results.mime!.wrapped).toBe(true);
      const mime = results.mime!;
      // The projector records it in the activity store a moment after the send.
      const details = await eventually(async () => {
        const answer = await call(api.baseUrl, 'GET', `/messages/outbound/${mime.messageId}/details`, {
          key: org.liveKey,
        });
        return answer.status === 200 ? answer : undefined;
      });
      expect(details.body).toMatchObject({
        Subject: 'Rechnung März — ünïcödé',
        From: expect.stringContaining(`Zoë Büro`),
        To: [{ Email: to, Name: 'Ånn Lee' }],
        TextBody: 'Grüße, your invoice',
        Attachments: ['Rechnung-März.pdf', 'logo.png'],
      });
      expect(details.body.HtmlBody).toContain('cid:logo@compat');
      const dump = await call(api.baseUrl, 'GET', `/messages/outbound/${mime.messageId}/dump`, { key: org.liveKey });
      const parsed = await PostalMime.parse(dump.body.Body as string);
      const pdf = parsed.attachments.find((attachment) => attachment.filename === 'Rechnung-März.pdf');
      expect(Buffer.from(pdf!.content as ArrayBuffer).toString('base64')).toBe(mime.pdfBase64);
      const logo = parsed.attachments.find((attachment) => attachment.filename === 'logo.png');
      expect(logo).toMatchObject({ mimeType: 'image/png', contentId: '<logo@compat>' });
    }

    expect(results.wrongKey).toMatchObject({ ...expected.wrongKey, errorCode: 10 });
    expect(results.inactive).toMatchObject({ ...expected.inactive, errorCode: 406 });
  }, 300_000);
});
