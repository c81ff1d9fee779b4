# Shared by start and test: the repository root and the npm dependencies.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
cd "$ROOT"

say() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# Installs the npm dependencies when they are missing or older than the lockfile.
ensure_dependencies() {
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
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
