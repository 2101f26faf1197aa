#!/usr/bin/env bash
# deploy/compose.yaml run with Debian's podman-compose 1.0.3 (tests/container/podman.sh): its
# postgres, loader and server as podman-compose starts them, its nginx-grpc and nginx-http started
# by this script in the server's network namespace (podman-compose 1.0.3 cannot run network_mode
# "service:server"; tests/container/compose_file.py gives them the compose file's own options).
# PostgreSQL is tests/container/postgres/Dockerfile, Debian 12's PostgreSQL 15 with the official
# image's entrypoint behaviour that the compose file uses, tagged postgres:15-bookworm in the tests'
# podman storage (no registry here). podman-compose 1.0.3 ignores depends_on's conditions, so this
# script starts each service once the condition it waits for holds: the loader once postgres's
# healthcheck passes, the server once the loader exited 0. The loader loads the "small" demo
# (DVEXPORT_COMPOSE_DEMO=sl: the shipped "sl", about 1,000,000 values, some minutes more).
# Checks: each healthcheck of the compose file passes; the server listens on its loopback only and
# nginx on the published ports; an export through the published ports (gRPC on 50051, DHIS2's URL
# on 8080) is byte for byte the host's binaries' one against the same database; metrics on 9464.
# Exits 77 (ctest's skip) with the reason where podman, podman-compose or the base images are
# missing. Usage: compose_test.sh SERVER_BINARY CLI_BINARY
set -euo pipefail
server_bin=$1
cli_bin=$2
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$repo/tests/container"
demo="${DVEXPORT_COMPOSE_DEMO:-small}"

# The database is the compose file's PostgreSQL, set below.
export DVEXPORT_TEST_PG="${DVEXPORT_TEST_PG:-unset}"
# shellcheck source=tests/e2e/lib.sh
source "$repo/tests/e2e/lib.sh"
# shellcheck source=tests/container/podman.sh
source "$here/podman.sh"
# shellcheck source=tests/container/exports.sh
source "$here/exports.sh"

if ! command -v podman-compose >/dev/null; then
  echo "SKIPPED: podman-compose is not installed (apt-get install podman-compose)" >&2
  exit 77
fi
podman_ready_or_skip
image="${DVEXPORT_TEST_IMAGE:-localhost/dvexport:test}"
podman_image_build "$repo" "$image" "$work/build.log" || fail "the image"
# The names the compose file gives its images.
podman tag "$image" localhost/dvexport:local
podman build --format docker --pull=never --network host -t docker.io/library/postgres:15-bookworm \
  "$here/postgres" >"$work/postgres-build.log" 2>&1 ||
  { tail -n 20 "$work/postgres-build.log" >&2; fail "the PostgreSQL stand-in's image"; }

python3 "$here/compose_file.py" render "$repo" "$work/compose.yaml" "$demo"
compose=(podman-compose -p dvexport -f "$work/compose.yaml")
sidecars=(nginx-grpc nginx-http)
down() {
  local s
  for s in "${sidecars[@]}"; do podman rm -f -t 0 "dvexport_${s}_1" >/dev/null 2>&1 || true; done
  "${compose[@]}" down -v >/dev/null 2>&1 || true
  podman volume rm -f dvexport_pgdata >/dev/null 2>&1 || true
  podman network rm -f dvexport_default >/dev/null 2>&1 || true
}
cleanup_compose() {
  down
  cleanup
}
trap cleanup_compose EXIT
down  # what an interrupted run left (the tests' own podman storage)
for port in 50051 8080 9464; do
  if (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    fail "port $port is taken on this machine: the compose file publishes it"
  fi
done

# healthy NAME [TRIES]: the container's healthcheck (the compose file's) passes, every 0.5 s.
healthy() {
  for _ in $(seq 1 "${2:-120}"); do
    podman healthcheck run "$1" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  podman logs "$1" 2>&1 | tail -n 20 >&2
  fail "$1's healthcheck never passed"
}
up() {
  "${compose[@]}" up -d --no-deps "$@" >>"$work/compose.log" 2>&1 ||
    { cat "$work/compose.log" >&2; fail "podman-compose up $*"; }
}

started=$(date +%s)
up postgres
healthy dvexport_postgres_1
echo "postgres: healthy after $(($(date +%s) - started)) s" >&2
up loader
code=$(podman wait dvexport_loader_1)
podman logs dvexport_loader_1 >"$work/loader.log" 2>&1 || true
[[ "$code" == 0 ]] || { tail -n 20 "$work/loader.log" >&2; fail "the loader exited $code"; }
echo "loader: $(grep -m1 '^loaded' "$work/loader.log") after $(($(date +%s) - started)) s" >&2
up server
healthy dvexport_server_1
for s in "${sidecars[@]}"; do
  mapfile -t options < <(python3 "$here/compose_file.py" sidecar "$work/compose.yaml" "$s")
  podman run -d --pull=never --name "dvexport_${s}_1" --network container:dvexport_server_1 \
    --health-interval=disable "${options[@]}" >/dev/null 2>"$work/podman.log" ||
    { cat "$work/podman.log" >&2; fail "podman run $s"; }
  healthy "dvexport_${s}_1" 60
done
echo "server, nginx-grpc, nginx-http: healthy after $(($(date +%s) - started)) s" >&2

# Who listens where, in the server's network namespace: /proc/net/tcp and tcp6 (gRPC binds
# 127.0.0.1 as an IPv6 socket, ::ffff:127.0.0.1), as hex address:port.
podman exec dvexport_server_1 cat /proc/net/tcp /proc/net/tcp6 >"$work/tcp"
listening() {  # PORT: the addresses listening on PORT, IPv4-mapped ones as IPv4
  python3 - "$1" "$work/tcp" <<'PY'
import ipaddress, sys
port, path = int(sys.argv[1]), sys.argv[2]
for line in open(path).read().splitlines():
    fields = line.split()
    if len(fields) < 4 or fields[3] != "0A" or ":" not in fields[1]:
        continue
    address, p = fields[1].split(":")
    if int(p, 16) != port:
        continue
    raw = bytes.fromhex(address)
    # The kernel prints each 32-bit word in host (little-endian) order.
    raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    ip = ipaddress.ip_address(raw)
    print(ip.ipv4_mapped or ip if ip.version == 6 else ip)
PY
}
for port in 50052 8081; do
  [[ "$(listening "$port" | sort -u)" == 127.0.0.1 ]] ||
    fail "the server's port $port is not on 127.0.0.1 alone: $(listening "$port" | tr '\n' ' ')"
done
for port in 50051 8080 9464; do
  addresses=$(listening "$port" | sort -u | tr '\n' ' ')
  [[ "$addresses" =~ ^((0\.0\.0\.0|::)\ )+$ ]] || fail "port $port is not on all addresses: $addresses"
done
podman exec dvexport_nginx-grpc_1 cat /tmp/nginx-grpc/nginx.pid >/dev/null ||
  fail "nginx-grpc runs no nginx"
echo "server on 127.0.0.1:50052 and :8081 only; nginx on 50051 and 8080" >&2

# The host's binaries against the same database (the compose network's address of postgres).
pg_ip=$(podman inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' \
  dvexport_postgres_1)
export PGPASSWORD=dvexport-demo-reader
export DVEXPORT_TEST_PG="host=$pg_ip port=5432 dbname=dhis2 user=dvexport_reader"
start_server "$server_bin"
exports_compare "$server" 127.0.0.1:50051 http://127.0.0.1:8080 "$DVEXPORT_TEST_PG" \
  "compose's nginx"
curl -sS -f -o "$work/metrics" http://127.0.0.1:9464/metrics || fail "metrics on 9464"
grep -q '^dvexport_' "$work/metrics" || fail "no dvexport_ metrics on 9464"
echo "PASS: podman-compose of deploy/compose.yaml (demo $demo, image $image)" \
  "in $(($(date +%s) - started)) s" >&2
