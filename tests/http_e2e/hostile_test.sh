#!/usr/bin/env bash
# dvexport-server's HTTP door against a hostile network (hostile_test.py): malformed request
# lines, oversized headers (431 or close), a URL beyond the limit (414), slowloris (closed within
# --http_header_timeout_ms plus slack), a half-closed client, invalid UTF-8 and percent-encoding
# (400 naming the parameter), a client that disconnects mid-export (its export slot comes back:
# dvexport_active_exports 0 on /metrics, the export logged CANCELLED), and 10,000 idle
# connections (as many as the hard descriptor limit allows; the server stays up, serves a
# normal export meanwhile, closes connections beyond --http_max_connections_per_peer). After all
# of it a normal export still gives the CLI's bytes, the servers are alive and hold no slot.
# Usage: hostile_test.sh SERVER_BINARY CLI_BINARY   (DVEXPORT_TEST_PG set)
set -euo pipefail
server_bin=$1
cli_bin=$2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# shellcheck source=tests/http_e2e/lib.sh
source "$here/lib.sh"

# The idle connections need a descriptor each, in this test's client and in the server: raise
# the soft limit to the hard one (no privilege needed); the client opens what it allows.
hard=$(ulimit -Hn)
idle_count=10000
if [[ "$hard" != unlimited ]]; then
  ulimit -n "$hard"
  # Room for the connections beyond the caps and for what else each process opens.
  if ((hard - 600 < idle_count)); then idle_count=$((hard - 600)); fi
fi
echo "descriptor limit: soft $(ulimit -n), hard $hard: $idle_count idle connections"
((idle_count >= 1000)) || fail "the hard descriptor limit $hard leaves too few for the test"

# "main": the hostile requests, with a short header timeout; "idle": the idle connections, with
# a header timeout longer than the test, so that only the caps close them: 100 per peer, and in
# all room for the idle connections, one peer at its cap, one normal export and 50 more.
main_metrics=$(free_port)
start_http_server main "$server_bin" --read_streams 1 --http_header_timeout_ms 2000 \
  --http_max_header_kib 63 \
  --metrics_listen "127.0.0.1:$main_metrics"
main_http_port=$http_port
main_pid=$server_pid
idle_metrics=$(free_port)
start_http_server idle "$server_bin" --read_streams 1 --http_header_timeout_ms 60000 \
  --http_max_connections_per_peer 100 --http_max_connections $((idle_count + 150)) \
  --http_max_pending_heads $((idle_count + 149)) \
  --metrics_listen "127.0.0.1:$idle_metrics"
idle_http_port=$http_port
idle_pid=$server_pid

mkdir -p "$work/expected"
cli_export "$work/expected/q1.json" --data-set JurnHCkmDCn --period 202401 \
  --org-unit ImspTQPwCqd --children
grep -q '"dataElement":' "$work/expected/q1.json" || fail "the CLI exported no values"

python3 "$here/hostile_test.py" --expected "$work/expected" --token "$admin_token" \
  --main-http "$main_http_port" --main-metrics "$main_metrics" --main-log "$work/main/server.log" \
  --header-timeout-ms 2000 \
  --idle-http "$idle_http_port" --idle-metrics "$idle_metrics" --per-peer 100 \
  --idle-count "$idle_count" --max-connections $((idle_count + 150)) ||
  fail "hostile_test.py"

for pid in "$main_pid" "$idle_pid"; do
  kill -0 "$pid" 2>/dev/null || fail "a server died (pid $pid)"
done
echo "hostile_test: the server stayed up, refused what it should and holds no export slot"
