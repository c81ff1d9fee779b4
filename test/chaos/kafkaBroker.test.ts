import { execFileSync } from 'node:child_process';
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startPrivateStack, type PrivateStack } from '../support/privateStack';
import { errorAnswersOf, keyedLoad, sleep, summarize, waitUntil, type Answer } from './harness';
import { startPipeline, type Pipeline } from './pipeline';

/**
 * Issue 11, item 7: a three-broker Kafka (replication factor 3, min.insync.replicas 2) loses one broker — the
 * leader of a partition of email.messages, killed with SIGKILL — in the middle of ~300 keyed sends a second.
 * Every send that gets a 503 or no answer is retried with its own Idempotency-Key, as docs/api.md advises.
 * What a user relies on: nothing accepted is lost, nothing is delivered twice (counted by Message-ID at the
 * mail server), and once the partitions have their new leaders no send is refused any more: the API rides
 * out the election with a few seconds of retries inside it.
 */

/**
 * Issue 11 asks for 300 sends/s, on a machine whose core signs ~2,100 RSA-2048 signatures a second (`openssl speed
 * rsa2048`, the figure issue 16 gives). This test offers 300/s scaled by this machine's own speed, measured here the
 * same way, so it breaks a broker under the same share of the machine on a slower day (never below 100/s, never
 * above 300/s). On a machine at 1,190 signs/s, 300/s is twice what three brokers, the API and the sender accept on
 * two cores (`per second` below: answers climbed ~1 s for every second of load, before any kill), and the test
 * then measured the backlog, not the election. CHAOS_KAFKA_RATE sets the rate outright.
 */
const REFERENCE_SIGNS_PER_SECOND = 2100;
const MACHINE_SIGNS_PER_SECOND = rsaSignsPerSecond();
const RATE_PER_SECOND = process.env.CHAOS_KAFKA_RATE
  ? Number(process.env.CHAOS_KAFKA_RATE)
  : Math.round(300 * Math.min(1, Math.max(1 / 3, MACHINE_SIGNS_PER_SECOND / REFERENCE_SIGNS_PER_SECOND)));
const SECONDS = Number(process.env.CHAOS_KAFKA_SECONDS ?? 20);
const KILL_AFTER_MS = 8000;

let stack: PrivateStack;
let pipeline: Pipeline;
let admin: Admin;

beforeAll(async () => {
  stack = await startPrivateStack({ name: 'chaos-kafka-broker', brokers: 3 });
  // The mail server runs in this process, beside the load generator, and this test counts deliveries, not their
  // signatures: checking DKIM on every tenth message leaves the cores to the brokers, the API and the sender.
  pipeline = await startPipeline(stack.addresses, { verifyDkimEvery: 10 });
  // This test reads no view: the projector would only take CPU from the two cores the load shares.
  await pipeline.projector.kill();
  admin = pipeline.store.kafka.admin();
  await admin.connect();
});

afterAll(async () => {
  await admin?.disconnect().catch(() => undefined);
  await pipeline?.close();
  await stack?.stop();
});

/** The partitions of a topic with their leader and in-sync replicas, as the cluster's metadata says now. */
async function partitionsOf(topic: string) {
  const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
  return metadata.topics[0]!.partitions;
}

describe('one broker of three killed during keyed sends', () => {
  it(
    'loses nothing, delivers nothing twice, and refuses nothing once the partitions have new leaders',
    {
      timeout: 600_000,
    },
    async () => {
      const topic = pipeline.store.topics.messages;
      const before = await partitionsOf(topic);
      expect(before.every((p) => p.replicas.length === 3 && p.isr.length === 3)).toBe(true);
      const victim = before.find((p) => p.partitionId === 0)!.leader;
      const led = before.filter((p) => p.leader === victim).map((p) => p.partitionId);

      // Warm the path first. On a cold three-broker stack (JVMs still compiling, the first produce requests, the
      // registry's first lookups) the first seconds of a 300/s load backed up to 15 s answers before the kill in
      // one CI run (the harness's 15 s request timeout then fired 33 times), which this test would blame on the
      // kill. The warm-up's messages are delivered too, and are expected.
      const warmUp = await keyedLoad({
        baseUrl: pipeline.baseUrl,
        apiKey: pipeline.org.liveKey,
        count: 100,
        ratePerSecond: 50,
        message: (i) => pipeline.message(RATE_PER_SECOND * SECONDS + i),
        retryForMs: 60_000,
        retryDelayMs: 500,
      });
      expect(summarize(warmUp).accepted).toBe(warmUp.length);
      const warmUpIds = new Set(warmUp.map((send) => send.messageId!));

      const started = Date.now();
      const loading = keyedLoad({
        baseUrl: pipeline.baseUrl,
        apiKey: pipeline.org.liveKey,
        count: RATE_PER_SECOND * SECONDS,
        ratePerSecond: RATE_PER_SECOND,
        // Three brokers, the API, the sender and this test's mail server share two cores: at 300/s the answers
        // back up to ~15 s for a few seconds early in the load, before any kill (the per-second timeline below
        // shows it in every run), which a 15 s client timeout turned into transport failures. Every request must
        // still be answered, within 30 s. And no more than 100 sends wait for their answers at once: on a machine
        // busier than that (CI beside other work, a run with 2,632 timeouts and nothing lost), the load slows to what
        // it answers instead of queueing requests in the API until the client gives up on them.
        requestTimeoutMs: 30_000,
        maxInFlight: 100,
        message: (i) => pipeline.message(i),
        retryForMs: 60_000,
        retryDelayMs: 500,
      });

      await sleep(KILL_AFTER_MS);
      const killedAt = Date.now();
      await stack.kill(`kafka-${victim}`);
      // The election is over when no partition is led by the dead broker and it is out of every ISR.
      let electedAt = 0;
      await waitUntil(
        async () => {
          const now = await partitionsOf(topic);
          const done = now.every((p) => p.leader !== victim && p.leader >= 0 && !p.isr.includes(victim));
          if (done) electedAt = Date.now();
          return done;
        },
        60_000,
        `new leaders for the partitions broker ${victim} led`,
      );

      const sends = await loading;
      const loadEnded = Date.now();
      const summary = summarize(sends);
      expect(summary.unanswered, JSON.stringify(summary)).toBe(0);

      const answers = sends.flatMap((send) => send.answers);
      const since = (at: number) => at - killedAt;
      const endOf = (answer: Answer) => answer.at + answer.ms;
      const refused = answers.filter((answer) => answer.status === 503);
      const errors = errorAnswersOf(sends);
      // Recovered: from then on every answer is a 200 within a second.
      const troubled = answers.filter((answer) => answer.status !== 200 || answer.ms > 1000);
      const recoveredAt = troubled.length ? Math.max(...troubled.map(endOf)) : killedAt;
      const figures: Record<string, unknown> = {
        ...summary,
        ratePerSecond: RATE_PER_SECOND,
        machineRsaSignsPerSecond: MACHINE_SIGNS_PER_SECOND,
        brokerKilled: `kafka-${victim}`,
        partitionsItLed: led,
        killedAtMs: killedAt - started,
        loadMs: loadEnded - started,
        leadersMovedAfterMs: since(electedAt),
        answers503: refused.length,
        answers503WindowMs: refused.length
          ? [Math.min(...refused.map((a) => since(a.at))), Math.max(...refused.map((a) => since(endOf(a))))]
          : null,
        answers503StartedAfterElection: refused.filter((a) => a.at > electedAt).length,
        slowestAnswerMs: Math.max(...answers.map((a) => a.ms)),
        answersOver1s: answers.filter((a) => a.ms > 1000).length,
        timeToRecoverMs: Math.max(0, recoveredAt - killedAt),
      };
      console.log(`chaos kafka broker, the API's answers: ${JSON.stringify(figures)}`);
      console.log(
        `per second from the kill (started, 503s, median ms, slowest ms): ${JSON.stringify(timeline(answers, killedAt))}`,
      );

      // Every accepted message is in the log, under the MessageID its 200 gave.
      const expected = new Set(sends.map((send) => send.messageId!));
      const logged = new Set((await pipeline.acceptedEvents()).map((e) => (e.data as { messageId: string }).messageId));
      const missingFromLog = [...expected].filter((id) => !logged.has(id));
      console.log(
        `accepted ${expected.size}, in the log ${logged.size}, accepted but missing from the log ${missingFromLog.length}`,
      );
      expect(missingFromLog).toEqual([]);

      const progress = setInterval(
        () => console.log(`delivered ${pipeline.deliveriesByMessageId().size} of ${expected.size}`),
        10_000,
      );
      onTestFinished(() => clearInterval(progress));
      // One count of the deliveries per check: counting them again for each message (6,000 × 6,000) kept this
      // process busy for seconds at a time, and the mail server the sender delivers to runs in this process.
      const undelivered = () => pipeline.undelivered(expected);
      await waitUntil(() => undelivered().length === 0, 400_000, 'every accepted message to be delivered').catch(
        (error: Error) => {
          throw new Error(
            `${error.message}: ${undelivered().length} of ${expected.size} not delivered; the sender said:\n` +
              pipeline.sender.output.slice(-4000),
            { cause: error },
          );
        },
      );
      await sleep(3000); // a late second copy would arrive now
      const deliveries = pipeline.deliveriesByMessageId();
      const lost = [...expected].filter((id) => !deliveries.has(id));
      const twice = [...deliveries.entries()].filter(([, n]) => n > 1);
      const unexpected = [...deliveries.keys()].filter((id) => !expected.has(id) && !warmUpIds.has(id));
      console.log(
        `chaos kafka broker: ${JSON.stringify({ ...figures, lost: lost.length, deliveredTwice: twice.length, unexpected: unexpected.length })}`,
      );

      expect(lost).toEqual([]);
      expect(twice).toEqual([]);
      expect(unexpected).toEqual([]);
      expect(summary.distinctMessageIds).toBe(sends.length);
      // Once the partitions have their new leaders, nothing is refused.
      expect(refused.filter((answer) => answer.at > electedAt)).toEqual([]);
      // Whatever was refused during the election was a Postmark-style 503 with Retry-After, never a 500 or a hang.
      for (const answer of errors) {
        expect(answer.status, JSON.stringify(answer.body)).toBe(503);
        expect(answer.body).toMatchObject({ ErrorCode: expect.any(Number), Message: expect.any(String) });
      }
      expect(summary.transportFailures).toEqual({});
    },
  );
});

/** The answers by the second (from the kill) their request started in: how many, how many 503s, median and slowest. */
function timeline(answers: Answer[], from: number): [number, number, number, number, number][] {
  const buckets = new Map<number, Answer[]>();
  for (const answer of answers) {
    const second = Math.floor((answer.at - from) / 1000);
    buckets.set(second, [...(buckets.get(second) ?? []), answer]);
  }
  return [...buckets.entries()]
    .sort(([a], [b]) => a - b)
    .map(([second, list]) => {
      const ms = list.map((a) => a.ms).sort((a, b) => a - b);
      const refused = list.filter((a) => a.status === 503).length;
      return [second, list.length, refused, ms[Math.floor(ms.length / 2)]!, ms.at(-1)!];
    });
}

/** RSA-2048 signatures a second on one core, as `openssl speed rsa2048` measures them (the issue's own measure). */
function rsaSignsPerSecond(): number {
  const report = execFileSync('openssl', ['speed', '-seconds', '1', 'rsa2048'], { encoding: 'utf8', stdio: 'pipe' });
  const row = /^rsa\s+2048 bits\s+\S+\s+\S+\s+([\d.]+)/m.exec(report);
  if (!row) throw new Error(`no rsa2048 row in openssl speed's report:\n${report}`);
  return Math.round(Number(row[1]));
}
