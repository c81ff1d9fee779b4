# Shared by start and test: the repository root and the npm dependencies.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
cd "$ROOT"

say() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# Installs the npm dependencies when they are missing or older than the lockfile or a patch of patches/ (applied by
# patch-package, the postinstall script).
ensure_dependencies() {
  local stale=''
  for file in package-lock.json patches/*.patch; do
    if [ -f "$file" ] && [ "$file" -nt node_modules/.package-lock.json ]; then stale=1; fi
  done
  if [ ! -f node_modules/.package-lock.json ] || [ -n "$stale" ]; then
    say "installing npm dependencies (npm ci)"
    npm ci --no-audit --no-fund --loglevel=error
  fi
}

# The status is read whole first: `status | grep -q` under pipefail failed whenever grep stopped reading at the first
# match (SIGPIPE), so `npm test` took running services for stopped ones and stopped them at its end.
services_running() {
  local status
  status=$(bash infra/local/bin/infra status 2>/dev/null || true)
  grep -q ' up ' <<<"$status"
}

# npm test and the benchmarks: when no service is running yet, the services this run starts are stopped when it
# exits (or earlier, by stop_services_started_here); services already running are left running, and
# SENDLINE_KEEP_SERVICES=1 keeps them all.
services_started_here=
stop_services_at_exit_if_started_here() {
  if services_running || [ -n "${SENDLINE_KEEP_SERVICES:-}" ]; then return 0; fi
  services_started_here=1
  trap stop_services_started_here EXIT
}
stop_services_started_here() {
  if [ -n "$services_started_here" ]; then bash infra/local/bin/infra down || true; fi
  services_started_here=
}

# npm test's Redis Cluster: the integration suite runs against a Redis Cluster of three masters with one replica each
# (issue 38), the fault tests (and the dev stack) against the single Redis of `infra up`: every run tests both. The
# cluster is the run's own, started from Debian's redis-server as `infra up --redis-cluster` does, fresh (no data of
# an earlier run), from .local/test-redis-cluster on 127.0.0.1:7100-7105 (cluster buses 7106-7111;
# SENDLINE_TEST_REDIS_CLUSTER_PORT moves the block), and stopped once the integration suite is done (or at exit).
TEST_REDIS_CLUSTER_DIR=$ROOT/.local/test-redis-cluster
test_redis_cluster() { # up|down
  (
    export SENDLINE_LOCAL_DIR=$TEST_REDIS_CLUSTER_DIR SENDLINE_DOWNLOADS_DIR=$ROOT/.local \
      SENDLINE_REDIS_CLUSTER_PORT=${SENDLINE_TEST_REDIS_CLUSTER_PORT:-7100}
    if [ "$1" = down ]; then
      [ ! -d "$TEST_REDIS_CLUSTER_DIR" ] || bash infra/local/bin/infra down 2>/dev/null || true
      exit 0
    fi
    # Only Redis is started there: the other services are the ones `infra up` started (their addresses given).
    set -a && source .local/services.env && set +a && unset REDIS_URL \
      && bash infra/local/bin/infra reset && bash infra/local/bin/infra up --redis-cluster --no-provision
  )
}
