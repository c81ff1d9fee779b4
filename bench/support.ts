/** What the benchmarks share: their own topic names, profiling flags, waiting for a server to answer. */
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
