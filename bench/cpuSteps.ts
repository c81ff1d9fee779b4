/**
 * A V8 CPU profile (`node --cpu-prof`, BENCH_PROFILE) of the sender, summed per step of its path: each sample
 * goes to the first step below whose code is anywhere on the sample's stack (so the RSA signature, native code
 * called from the DKIM signer, counts as `sign`; TLS records written for an SMTP connection count as `smtp`).
 * The Kafka client's socket reads serve fetches and produce answers alike: they are one row, with the decoding.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Steps in the order they are tried: the first whose pattern matches a frame (`function@url`) takes the sample. */
const STEPS: readonly [string, RegExp][] = [
  ['sign (DKIM)', /^signMessage@|\/dkim\/|smtp\/dkimSignature\.ts/],
  // Composing is synchronous and starts in compose.ts (mimeBytes.ts writes the tree): nodemailer's MIME frames outside
  // it are the transport's Mailer wrapping the raw bytes it was given in a MailComposer tree and streaming them, which
  // is sending.
  ['compose (MIME)', /smtp\/compose\.ts|smtp\/mimeBytes\.ts/],
  [
    'smtp (client, TLS)',
    /smtp-connection|smtp-pool|\/mailer\/|mail-composer|mime-node|mime-funcs|smtp\/transport\.ts|node:_tls|node:tls/,
  ],
  ['ledger + views (Redis)', /ioredis|redis-parser|sender\/src\/ledger\.ts|views\/suppressions/],
  ['outcome/sent append (produce)', /eventStore\/producer\.ts|kafkajs\/src\/producer|commands\/handler\.ts/],
  ['fetch + decode (Kafka, Avro)', /kafkajs|avsc|registry\/codec|decodeBatch|eventStore\/consumer\.ts/],
  ['plan + outcomes (domain)', /sender\/src\/(plan|outcomes|commands)\.ts|domain\/src/],
  ['sender pipeline (rest)', /apps\/sender\/src/],
];

/**
 * CPU ms per step in a profile (idle time left out); `program` and `gc` are V8's own rows. Samples before the
 * first one in the delivery pipeline are left out too (starting the process: tsx compiling, connecting).
 */
export function cpuBySteps(path: string): Record<string, number> {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stepOf = new Map<number, string>();
  const classify = (id: number): string => {
    const known = stepOf.get(id);
    if (known !== undefined) return known;
    const leaf = byId.get(id)!.callFrame.functionName;
    let step: string;
    if (leaf === '(idle)') step = '';
    else if (leaf === '(garbage collector)') step = 'gc';
    else if (leaf === '(program)') step = 'program';
    else {
      const urls: string[] = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const { functionName, url } = byId.get(at)!.callFrame;
        urls.push(`${functionName}@${url}`);
      }
      step = STEPS.find(([, pattern]) => urls.some((url) => pattern.test(url)))?.[0] ?? 'other (node, timers, logs)';
    }
    stepOf.set(id, step);
    return step;
  };
  const totals: Record<string, number> = {};
  let delivering = false;
  const inPipeline = (id: number) => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      if (byId.get(at)!.callFrame.url.includes('apps/sender/src/pipeline.ts')) return true;
    }
    return false;
  };
  profile.samples.forEach((id, i) => {
    delivering ||= inPipeline(id);
    if (!delivering) return;
    const step = classify(id);
    if (step) totals[step] = (totals[step] ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000;
  });
  return totals;
}

/** The rows of a per-step table: each step's CPU ms per message, in the order above, then the total. */
export function perMessage(totals: Record<string, number>, messages: number): Record<string, string> {
  const order = [...STEPS.map(([step]) => step), 'other (node, timers, logs)', 'program', 'gc'];
  const rows: Record<string, string> = {};
  let sum = 0;
  for (const step of order) {
    const ms = totals[step] ?? 0;
    sum += ms;
    rows[step] = messages > 0 ? (ms / messages).toFixed(3) : '-';
  }
  rows.total = messages > 0 ? (sum / messages).toFixed(3) : '-';
  return rows;
}
