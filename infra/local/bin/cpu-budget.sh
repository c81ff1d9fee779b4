# Sourced by infra/local/bin/bench: BENCH_CPU_BUDGET=<fraction> runs a benchmark, and every service it uses, on that
# fraction of this machine's CPU time, spread over all its cores (a CFS quota, cgroup v1 or v2, 10 ms period).
#
# Why: a benchmark's targets are set on one machine and read on another. `taskset -c 0` halves a two-core machine
# too, but takes away its parallelism (Kafka's JVM and the sender never run at once); a quota over both cores keeps
# it, like two cores at a fraction of the speed. `openssl speed` inside the budget is printed first, so a run says
# what machine it stood for (e.g. 0.6 of a two-core host that signs 4,100 RSA-2048 a second per core gave 3,900–4,900
# a second in all: about two cores of 2,100).
#
# Services already running are moved into the budget for the run and back at its end; those the run starts start
# inside it (they are its children). Needs a writable cgroup file system (root in a container, or a delegated
# cgroup); refuses with a clear message otherwise.

CPU_BUDGET_PERIOD_US=10000
cpu_budget_group=
cpu_budget_parent=

enter_cpu_budget() {
  local fraction=$1 cores quota
  if ! [[ $fraction =~ ^(0?\.[0-9]+|1(\.0*)?)$ ]] || [[ $fraction =~ ^0?\.0*$ ]]; then
    echo "BENCH_CPU_BUDGET must be a fraction of the machine's CPU time above 0 and at most 1 (e.g. 0.5), not '$fraction'" >&2
    exit 2
  fi
  cores=$(nproc)
  quota=$(awk -v f="$fraction" -v c="$cores" -v p="$CPU_BUDGET_PERIOD_US" 'BEGIN { printf "%d", f * c * p }')
  if [ -w /sys/fs/cgroup/cpu/cgroup.procs ]; then # cgroup v1, cpu controller
    cpu_budget_parent=/sys/fs/cgroup/cpu
    cpu_budget_group=$cpu_budget_parent/sendline-bench-$$
    mkdir "$cpu_budget_group"
    echo "$CPU_BUDGET_PERIOD_US" >"$cpu_budget_group/cpu.cfs_period_us"
    echo "$quota" >"$cpu_budget_group/cpu.cfs_quota_us"
  elif [ -w /sys/fs/cgroup/cgroup.procs ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then # v2
    cpu_budget_parent=/sys/fs/cgroup
    grep -qw cpu "$cpu_budget_parent/cgroup.subtree_control" || echo +cpu >"$cpu_budget_parent/cgroup.subtree_control"
    cpu_budget_group=$cpu_budget_parent/sendline-bench-$$
    mkdir "$cpu_budget_group"
    echo "$quota $CPU_BUDGET_PERIOD_US" >"$cpu_budget_group/cpu.max"
  else
    echo "BENCH_CPU_BUDGET needs a writable cgroup file system with the cpu controller (/sys/fs/cgroup); none here" >&2
    exit 2
  fi
  echo $$ >"$cpu_budget_group/cgroup.procs"
  # The running services: each pid file names the service's own process (infra starts it directly, no shell between).
  local file moved=0
  for file in "${SENDLINE_LOCAL_DIR:-$ROOT/.local}"/run/*.pid; do
    [ -f "$file" ] || continue
    cat "$file" >"$cpu_budget_group/cgroup.procs" 2>/dev/null && moved=$((moved + 1))
  done
  say "CPU budget: $fraction of $cores cores ($quota µs every $CPU_BUDGET_PERIOD_US µs, over all cores);" \
    "$moved running service processes moved into it"
  # What machine the run stands for: RSA-2048 signatures a second, all cores at once, inside the budget.
  say "inside the budget: $(openssl speed -seconds 3 -multi "$cores" rsa2048 2>/dev/null |
    awk '/^rsa 2048/ { printf "%d RSA-2048 signatures a second over %d cores (%d a core)", $6, c, $6 / c }' c="$cores")"
}

# Everything still in the group goes back to the parent (services started by the run are stopped before this).
leave_cpu_budget() {
  [ -n "$cpu_budget_group" ] || return 0
  local pid
  while read -r pid; do
    echo "$pid" >"$cpu_budget_parent/cgroup.procs" 2>/dev/null || true
  done <"$cpu_budget_group/cgroup.procs"
  rmdir "$cpu_budget_group" 2>/dev/null || say "CPU budget: $cpu_budget_group left behind (a process still in it)"
  cpu_budget_group=
}
