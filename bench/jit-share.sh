#!/usr/bin/env bash
# bench/jit-share.sh [SECONDS] — while a benchmark runs: samples every process on the machine for SECONDS (20) with
# perf (CPU clock, 499 Hz, call stacks) and prints, for each process that used CPU, how much it used and which share
# of that went to V8's optimising compiler (TurboFan, on its own threads). Only native symbols are read, so the
# processes need no flags. Needs perf (Debian: linux-perf) and the right to sample every process (root here).
set -euo pipefail
seconds="${1:-20}"
command -v perf > /dev/null || { echo "jit-share: perf is not installed (Debian's linux-perf)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
ps -eo pid=,args= > "$work/ps"
perf record -a -g -e cpu-clock -F 499 -o "$work/perf.data" -- sleep "$seconds" > /dev/null 2>&1
perf script -i "$work/perf.data" -F pid,ip,sym 2> /dev/null | awk -v ps="$work/ps" -v seconds="$seconds" '
  function flush() { if (pid != "") { samples[pid]++; turbofan[pid] += jit; pid = "" } }
  BEGIN {
    while ((getline line < ps) > 0) {
      split(line, f, " "); sub(/^ *[0-9]+ +/, "", line); name[f[1]] = substr(line, 1, 90)
    }
  }
  /^ *[0-9]+ *$/ { flush(); pid = $1; jit = 0; next }
  /v8::internal::compiler/ { jit = 1 }
  function row(n, jit, who, what) {
    printf "%5.2f CPUs  %5.1f%% TurboFan  %7s  %s\n", n / 499 / seconds, 100 * jit / n, who, what
  }
  END {
    flush()
    for (p in samples) {
      if (p == 0) continue
      all += samples[p]; compiling += turbofan[p]
      if (samples[p] >= seconds * 5) row(samples[p], turbofan[p], p, name[p])
    }
    if (all > 0) row(all, compiling, "all", "every process (above: those over 1% of a CPU)")
  }' | sort -rn
