/**
 * What the benchmarks share: their own topic names, profiling flags, waiting for a server to answer, a process's CPU
 * time, percentiles.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { prefixedTopicNames, type TopicNames } from '@sendline/infra';

/** Topics of a benchmark run of its own (`bench-<run>.…`), so that it never reads or fills the real ones. */
export function benchTopics(run: string): TopicNames {
  return prefixedTopicNames(`bench-${run}`);
}

/**
 * BENCH_PROFILE=<folder>: the node flags that make each process a benchmark starts write a V8 CPU profile
 * there when it exits (open it in Chrome's DevTools).
 */
export const PROFILE_FLAGS = process.env.BENCH_PROFILE
  ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
  : [];

/** Resolves once `url` answers 2xx; fails after `timeoutMs`. */
export async function waitForHttp(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not come up`);
}

/** CPU time (ms) used so far by a process and its live descendants (the API's workers are children of its primary). */
export function cpuMs(p: { pid?: number | undefined }): number {
  const ofPid = (pid: number): number => {
    let total = 0;
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      total += ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
      for (const task of readdirSync(`/proc/${pid}/task`)) {
        const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
        for (const child of children ? children.split(' ') : []) total += ofPid(Number(child));
      }
    } catch {
      // gone meanwhile
    }
    return total;
  };
  return p.pid === undefined ? NaN : ofPid(p.pid);
}

/** The value at percentile `p` (nearest rank) of ascending `sorted`; NaN when empty. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
