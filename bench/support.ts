/**
 * What the benchmarks share: their own topic names, profiling flags, waiting for a server to answer, a process's CPU
 * time and peak RSS, the machine's CPU, the services' processes, percentiles.
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

/** The machine's CPU time so far, in clock ticks: busy (not idle or waiting on I/O) and in all, over all cores. */
export function machineCpu(): { busy: number; total: number; cores: number } {
  const lines = readFileSync('/proc/stat', 'utf8').split('\n');
  const fields = lines[0]!.split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0);
  const idle = fields[3]! + fields[4]!;
  return { busy: total - idle, total, cores: lines.filter((line) => /^cpu\d/.test(line)).length };
}

/** This process's CPU time so far, ms. */
export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** The services' processes when this machine runs them (infra/local's pid files), for the CPU figures. */
export function servicePids(): { name: string; pid: number }[] {
  const runDir = `${process.env.SENDLINE_LOCAL_DIR ?? '.local'}/run`;
  try {
    return readdirSync(runDir)
      .filter((file) => /^(kafka(-\d+)?|clickhouse|redis)\.pid$/.test(file))
      .sort()
      .map((file) => ({ name: file.replace(/\.pid$/, ''), pid: Number(readFileSync(`${runDir}/${file}`, 'utf8')) }));
  } catch {
    return [];
  }
}

/** A process's peak resident set (VmHWM), in MB. */
export function peakRssMb(p: { pid?: number | undefined }): number {
  try {
    const status = readFileSync(`/proc/${p.pid}/status`, 'utf8');
    return Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024);
  } catch {
    return NaN;
  }
}
