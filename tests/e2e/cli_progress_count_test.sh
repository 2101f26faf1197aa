#!/usr/bin/env bash
# On a terminal the CLI asks CountDataValues alongside its export, for the progress bar. The
# count takes no export slot: against a server with one slot and no queue, 10 terminal exports
# in a row all succeed, and the server answered their counts (it used to refuse 9 of 10).
# Usage: cli_progress_count_test.sh SERVER CLI   (DVEXPORT_TEST_PG set)
set -euo pipefail
server_bin=$1
cli_bin=$2

# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

start_server "$server_bin" --max_concurrent_exports 1 --max_queued_exports 0 --pool_size 2

for i in $(seq 1 10); do
  # script(1) gives the CLI a terminal, so that it shows progress (and counts).
  if ! script -qec "'$cli_bin' export --server $server --data-set JurnHCkmDCn \
      --org-unit ImspTQPwCqd --children --start-date 2024-01-01 --end-date 2024-12-31 \
      -o '$work/out-$i.json'" /dev/null >"$work/cli-$i.txt" 2>&1; then
    cat "$work/cli-$i.txt" >&2
    cat "$work/server.log" >&2
    fail "terminal export $i failed"
  fi
  [[ -s "$work/out-$i.json" ]] || fail "export $i wrote no file"
done
exports=$(grep -c '"rpc":"ExportFile".*"status":"OK"' "$work/server.log" || true)
counts=$(grep -c '"rpc":"CountDataValues".*"status":"OK"' "$work/server.log" || true)
refused=$(grep -c '"status":"RESOURCE_EXHAUSTED"' "$work/server.log" || true)
echo "exports OK: $exports, counts OK: $counts, refused: $refused"
((exports == 10)) || fail "$exports of 10 exports OK"
((counts >= 1)) || fail "no terminal export asked for a count (is the CLI not on a terminal?)"
((refused == 0)) || fail "$refused calls refused"
grep -q '"rpc":"CountDataValues".*"values":[1-9]' "$work/server.log" ||
  fail "the count's log line does not carry its count"
echo "cli_progress_count_test: 10 terminal exports on one slot, $counts counts beside them"
