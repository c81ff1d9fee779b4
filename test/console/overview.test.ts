import { randomUUID } from 'node:crypto';
import { groupOf, startProjector, type RunningProjector } from '@sendline/projector';
import { positionNewGroup, type Sender } from '@sendline/sender';
import { createClickHouse, secretKeyFromEnv, type ClickHouseClient, type TestMailServer } from '@sendline/infra';
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
  const groupPrefix = uniqueName('test-overview-projector');
  await positionNewGroup(api.deps.store, groupOf('activity', groupPrefix), [api.deps.store.topics.messages], 'latest');
  projector = await startProjector({
    store: api.deps.store,
    redis: api.deps.redis,
    clickhouse,
    database: addresses.clickhouseDatabase,
    groupPrefix,
    projections: ['activity'],
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
});
