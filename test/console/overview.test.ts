import { randomUUID } from 'node:crypto';
import { replayView } from '@sendline/application';
import { startProjector, type RunningProjector } from '@sendline/projector';
import { type Sender } from '@sendline/sender';
import type { MessageAcceptedData } from '@sendline/domain';
import {
  positionNewGroup,
  createClickHouse,
  deadLetterTopicOf,
  migrate,
  secretKeyFromEnv,
  type ClickHouseClient,
  type RunningConsumer,
  type TestMailServer,
  groupOf,
} from '@sendline/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailServer, startTestSender, testSenderConfig } from '../sender/support';
import {
  createTestOrganization,
  ensureTestSystemOrganization,
  startTestApi,
  type TestApi,
  type TestOrganization,
} from '../support/api';
import { call } from '../support/http';
import { addresses, eventually, uniqueName } from '../support/services';
import { ConsoleClient, openSignInMailbox, originOf, testConsoleServices, type SignInMailbox } from './support';

/**
 * The Overview page on real deliveries: messages sent through the API, delivered by the sender (in this process, for
 * this file's organization) to the test mail server, which refuses `hardbounce…` recipients (550 5.1.1), and the
 * activity projector writing ClickHouse.
 */

let api: TestApi;
let org: TestOrganization;
let mail: TestMailServer;
let sender: Sender;
let projector: RunningProjector;
let clickhouse: ClickHouseClient;
let mailbox: SignInMailbox;
let viewer: ConsoleClient;
let groupPrefix: string;

const unique = (local: string) => `${local}-${randomUUID().slice(0, 8)}@dest.example.net`;
const hard = unique('hardbounce');
const good = unique('good');

beforeAll(async () => {
  api = await startTestApi((deps) => ({ console: testConsoleServices(deps) }));
  await ensureTestSystemOrganization(api.deps);
  org = await createTestOrganization(api.deps, { allowance: 1000 });
  mail = await startMailServer(api.deps.accounts, [org]);
  sender = await startTestSender(
    api.deps,
    [org.organizationId],
    testSenderConfig({ host: mail.host, port: mail.port }),
    secretKeyFromEnv(),
  );
  clickhouse = createClickHouse(addresses.clickhouseUrl);
  // The dead_letters table comes with the activity store's migrations (run again here: a store made before it).
  await migrate(clickhouse, addresses.clickhouseDatabase);
  groupPrefix = uniqueName('test-overview-projector');
  await positionNewGroup(api.deps.store, groupOf('activity', groupPrefix), [api.deps.store.topics.messages], 'latest');
  projector = await startProjector({
    store: api.deps.store,
    redis: api.deps.redis,
    clickhouse,
    database: addresses.clickhouseDatabase,
    groupPrefix,
    // Dead letters from the beginning of their topics, so a replay of them below compares equal with this copy.
    projections: ['activity', 'deadLetters'],
    retention: false,
    writer: { maxDelayMs: 100 },
  });
  mailbox = await openSignInMailbox(api.deps.store);
  const email = unique('viewer');
  await org.service.addMember(org.organizationId, email, 'viewer');
  viewer = new ConsoleClient(originOf(api.baseUrl));
  await viewer.post('/sign-in/link', { email });
  expect((await viewer.signInWith(await mailbox.tokenFor(email))).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await mailbox?.close();
  await sender?.stop();
  await projector?.stop();
  await mail?.stop();
  await clickhouse?.close();
  await api?.close();
});

describe('GET /console/api/overview', () => {
  it('shows the allowance, today’s sent, delivered and bounced, and the bounce among recent problems', async () => {
    const ids: Record<string, string> = {};
    for (const to of [hard, good]) {
      const sent = await call(api.baseUrl, 'POST', '/email', {
        key: org.liveKey,
        body: { From: `Shop <orders@${org.domain}>`, To: to, Subject: `To ${to}`, TextBody: 'Hello' },
      });
      expect(sent.body.ErrorCode).toBe(0);
      ids[to] = sent.body.MessageID;
    }
    const today = new Date().toISOString().slice(0, 10);
    const overview = await eventually(
      async () => {
        const { body } = await viewer.get('/overview');
        const day = body.days?.at(-1);
        return day?.delivered === 1 && day?.bounced === 1 && day?.sent === 2 ? body : undefined;
      },
      60_000,
      'a delivery and a bounce in the overview',
    );
    expect(overview.allowance).toEqual({ period: today.slice(0, 7), used: 2, limit: 1000 });
    expect(overview.days).toHaveLength(30);
    expect(overview.days.at(-1)).toEqual({ date: today, sent: 2, delivered: 1, bounced: 1, deferred: 0 });
    expect(overview.days.slice(0, -1).every((d: { sent: number }) => d.sent === 0)).toBe(true);
    expect(overview.problems).toEqual([
      {
        at: expect.any(Number),
        kind: 'HardBounce',
        recipient: hard,
        messageId: ids[hard],
        subject: `To ${hard}`,
        detail: expect.stringContaining('550'),
      },
    ]);
  });

  it('lists a dead letter of the organization (a message a consumer set aside) among the problems, to no other organization', async () => {
    // A consumer of the messages topic that cannot process this one message and says it is not worth retrying:
    // the event store's consumer loop sets it aside on the dead-letter topic, as it would for the sender.
    const subject = `Set aside ${randomUUID().slice(0, 8)}`;
    const failingGroup = uniqueName('test-failing-consumer');
    const topic = api.deps.store.topics.messages;
    await positionNewGroup(api.deps.store, failingGroup, [topic], 'latest');
    const failing: RunningConsumer = await api.deps.store.consume({
      groupId: failingGroup,
      topics: [topic],
      retryUnknownErrors: false,
      handle: async ({ event }) => {
        if (event?.type === 'MessageAccepted' && (event.data as MessageAcceptedData).subject === subject) {
          throw Object.assign(new Error('no way to process this test message'), { code: 'ETESTFAIL' });
        }
      },
    });
    try {
      const sent = await call(api.baseUrl, 'POST', '/email', {
        key: org.liveKey,
        body: { From: `orders@${org.domain}`, To: unique('good'), Subject: subject, TextBody: 'Hello' },
      });
      expect(sent.body.ErrorCode).toBe(0);
      const problem = await eventually(
        async () => {
          const { body } = await viewer.get('/overview');
          return (body.problems as { kind: string; messageId: string }[]).find(
            (p) => p.kind === 'DeadLetter' && p.messageId === sent.body.MessageID,
          );
        },
        60_000,
        'the dead letter among the problems',
      );
      expect(problem).toEqual({
        at: expect.any(Number),
        kind: 'DeadLetter',
        recipient: '',
        messageId: sent.body.MessageID,
        subject,
        detail: `MessageAccepted set aside by ${failingGroup} after 1 attempt: no way to process this test message`,
      });
      // The bounce of the first test is still there, newest first.
      const { body } = await viewer.get('/overview');
      expect(body.problems.map((p: { kind: string }) => p.kind)).toEqual(['DeadLetter', 'HardBounce']);

      const other = await createTestOrganization(api.deps);
      expect(await api.deps.deadLetters.recent(other.organizationId, 20)).toEqual([]);
      expect((await api.deps.deadLetters.recent(org.organizationId, 20)).map((d) => d.messageId)).toEqual([
        sent.body.MessageID,
      ]);

      // The dead letters are a view like the others: rebuilt from their topics, equal to the live copy.
      const report = await replayView('deadLetters', {
        store: api.deps.store,
        clickhouse,
        database: addresses.clickhouseDatabase,
        liveGroupId: groupOf('deadLetters', groupPrefix),
        dryRun: true,
      });
      expect(report.topics).toEqual([
        deadLetterTopicOf(topic),
        deadLetterTopicOf(api.deps.store.topics.deliveryRetries),
      ]);
      expect(report).toMatchObject({ equal: true, swapped: false });
      expect(report.events).toBeGreaterThanOrEqual(1);
    } finally {
      await failing.stop();
    }
  });
});
