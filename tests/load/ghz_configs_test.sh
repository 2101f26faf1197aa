#!/usr/bin/env bash
# Every load-test config in deploy/ghz/ through the real ghz (https://ghz.sh) against
# dvexport-server started with its default flags (only --listen and --pg given; every call is
# authenticated with the demo superuser's token the configs carry in their metadata): each config
# unchanged but for the address and a bounded total
# (-n: twice its concurrency, which is kept), and every call must end OK. Then a health check
# through server reflection alone (no --proto).
# ghz is taken from PATH, else from $GHZ; without either the test is skipped (exit 77).
# Usage: ghz_configs_test.sh SERVER CONFIG_DIR   (DVEXPORT_TEST_PG set)
set -euo pipefail
server_bin=$1
config_dir=$2

if command -v ghz >/dev/null 2>&1; then
  ghz=$(command -v ghz)
elif [[ -n "${GHZ:-}" && -x "$GHZ" ]]; then
  ghz=$GHZ
else
  echo "SKIP: ghz is neither on PATH nor in \$GHZ (${GHZ:-unset}); see docs/LOAD-TESTING.md" >&2
  exit 77
fi
echo "ghz: $ghz ($("$ghz" --version 2>&1))"

# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.sh"

start_server "$server_bin"

# "report.json" (ghz -O json) holds "total" calls, every one OK.
check_report() {
  python3 - "$1" "$2" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
total = int(sys.argv[2])
codes = report.get("statusCodeDistribution") or {}
errors = report.get("errorDistribution") or {}
print(f"  count={report.get('count')} codes={codes} errors={errors}")
if report.get("count") != total or codes != {"OK": total} or errors:
    sys.exit(f"FAIL: expected {total} calls, all OK")
PY
}

configs=("$config_dir"/*.json)
((${#configs[@]} > 0)) || fail "no configs in $config_dir"
for config in "${configs[@]}"; do
  name=$(basename "$config")
  concurrency=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["concurrency"])' \
    "$config")
  total=$((2 * concurrency))
  echo "== $name: -n $total (concurrency $concurrency kept)"
  status=0
  timeout 600 "$ghz" --config "$config" -n "$total" -O json "$server" >"$work/report.json" ||
    status=$?
  ((status == 0)) || { cat "$work/report.json"; fail "$name: ghz exited $status"; }
  check_report "$work/report.json" "$total" || fail "$name"
done

echo "== grpc.health.v1.Health.Check through reflection"
"$ghz" --insecure --call grpc.health.v1.Health.Check -n 4 -O json "$server" >"$work/report.json" ||
  { cat "$work/report.json"; fail "health: ghz failed"; }
check_report "$work/report.json" 4 || fail "health"
# Clients that cancel after the first message and call again at once, as many as the server's
# 4 slots: none is refused (a slot is free the moment its call ends) and every log line,
# cancelled ones included, names its peer.
echo "== cancel and call again: export-file-full.json -n 40 -c 4 --stream-call-count 1"
"$ghz" --config "$config_dir/export-file-full.json" -n 40 -c 4 --stream-call-count 1 -O json \
  "$server" >"$work/report.json" || true
python3 - "$work/report.json" <<'PY' || fail "cancel and call again"
import json, sys
report = json.load(open(sys.argv[1]))
codes = report.get("statusCodeDistribution") or {}
print(f"  count={report.get('count')} codes={codes}")
if report.get("count") != 40 or set(codes) - {"OK", "Canceled"}:
    sys.exit("FAIL: expected 40 calls, each OK or cancelled by ghz")
PY
if grep -q '"status":"RESOURCE_EXHAUSTED"' "$work/server.log"; then
  fail "the server refused calls: $(grep -c '"status":"RESOURCE_EXHAUSTED"' "$work/server.log")"
fi
if grep -q '"peer":"unknown"' "$work/server.log"; then
  fail "log lines without their peer: $(grep '"peer":"unknown"' "$work/server.log" | head -3)"
fi
echo "  server log: $(grep -c '"status":"CANCELLED"' "$work/server.log" || true) CANCELLED lines, \
each with its peer; none refused"
echo "ghz_configs_test: ${#configs[@]} configs and the health check, every call OK"
