#!/usr/bin/env bash
# The shipped image, built and run for real with podman (tests/container/podman.sh): builds
# deploy/docker/Dockerfile (base images made from Debian's archive where missing), then checks what
# an operator relies on:
#   - the runtime stage: user 10001, every shared library of the binaries present (ldd), no
#     compiler, build tool or -dev package; the image's size is reported;
#   - the container's server against the test PostgreSQL (host network): its HEALTHCHECK command
#     answers, an export through it (gRPC, and DHIS2's URL on the HTTP door) is byte for byte the
#     one the host's binaries give, a demo token is accepted and a wrong one refused (--auth
#     dhis2);
#   - SIGTERM ends the container well within the Kubernetes Deployment's grace period (45 s), by
#     the server's own shutdown (exit 0), not a SIGKILL.
# Exits 77 (ctest's skip) with the reason where podman or the base images cannot be made.
# Usage: image_test.sh SERVER_BINARY CLI_BINARY   (DVEXPORT_TEST_PG set: scripts/test, or
# scripts/test-container, which runs it alone)
set -euo pipefail
server_bin=$1
cli_bin=$2
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# shellcheck source=tests/e2e/lib.sh
source "$repo/tests/e2e/lib.sh"
# shellcheck source=tests/container/podman.sh
source "$repo/tests/container/podman.sh"

podman_ready_or_skip

image="${DVEXPORT_TEST_IMAGE:-localhost/dvexport:test}"
name="dvexport-test-$$"
containers=()
cleanup_containers() {
  for c in "${containers[@]}"; do podman rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  cleanup
}
trap cleanup_containers EXIT

# --- the build (layers kept between runs; a change to the sources rebuilds from "COPY . .") ---
# DVEXPORT_TEST_IMAGE_BUILT=1 checks $DVEXPORT_TEST_IMAGE as it is, without building it (to check
# an image built otherwise, or a deliberately broken one).
if [[ "${DVEXPORT_TEST_IMAGE_BUILT:-}" != 1 ]]; then
  echo "building $image from deploy/docker/Dockerfile" >&2
  started=$(date +%s)
  # Docker's format: OCI images have no HEALTHCHECK.
  podman build --format docker --pull=never --network host -f "$repo/deploy/docker/Dockerfile" \
    -t "$image" "$repo" >"$work/build.log" 2>&1 ||
    { tail -n 40 "$work/build.log" >&2; fail "podman build"; }
  echo "built in $(($(date +%s) - started)) s" >&2
fi
podman image exists "$image" || fail "no image $image"

# --- the runtime stage ---
user=$(podman image inspect -f '{{.Config.User}}' "$image")
[[ "$user" == "10001:10001" ]] || fail "image user is '$user', not 10001:10001"
run() { podman run --rm --pull=never --no-healthcheck --entrypoint "$1" "$image" "${@:2}"; }
[[ "$(run /usr/bin/id -u)" == 10001 ]] || fail "the container does not run as uid 10001"
missing=$(run /usr/bin/ldd /usr/local/bin/dvexport-server /usr/local/bin/dvexport | grep 'not found' || true)
[[ -z "$missing" ]] || fail "shared libraries missing in the runtime stage: $missing"
tools=$(run /bin/sh -c 'for t in cc c++ gcc g++ clang cmake ninja make ld as; do command -v "$t"; done' || true)
[[ -z "$tools" ]] || fail "build tools in the runtime stage: $tools"
dev=$(run /usr/bin/dpkg-query -W -f '${Package}\n' | grep -E -- '-dev$' || true)
[[ -z "$dev" ]] || fail "-dev packages in the runtime stage: $dev"
size=$(podman image inspect -f '{{.Size}}' "$image")
echo "image size: $((size / 1000000)) MB (runtime stage, debian:12-slim base)" >&2

# --- the container's server ---
# The image's HEALTHCHECK asks 127.0.0.1:50051, the port of its default command.
grpc_port=50051
if (echo >"/dev/tcp/127.0.0.1/$grpc_port") 2>/dev/null; then
  fail "port $grpc_port is taken on this machine: the container's server needs it (host network)"
fi
http_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_container() {
  containers+=("$1")
  # No healthcheck timer (podman's needs systemd): the test runs the image's HEALTHCHECK itself.
  podman run -d --pull=never --network host --health-interval=disable --name "$1" "$image" \
    --listen="127.0.0.1:$grpc_port" \
    --http_listen="127.0.0.1:$http_port" --pg "$DVEXPORT_TEST_PG" \
    --shutdown_grace_s=30 "${@:2}" >/dev/null 2>"$work/podman.log" ||
    { cat "$work/podman.log" >&2; fail "podman run"; }
  for _ in $(seq 1 100); do
    podman healthcheck run "$1" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  podman logs "$1" >&2 || true
  fail "the container's HEALTHCHECK never passed"
}
start_container "$name" --auth=none
podman healthcheck run "$name" >/dev/null || fail "HEALTHCHECK"

# The same export through the host's binaries.
start_server "$server_bin" --auth=none
psql_q() { psql "$DVEXPORT_TEST_PG" -XAtq -c "$1"; }
# The root with the most units below it.
root=$(psql_q "SELECT o.uid FROM organisationunit o WHERE o.parentid IS NULL ORDER BY
  (SELECT count(*) FROM organisationunit c WHERE c.path LIKE o.path || '%') DESC, o.uid LIMIT 1")
args=(export --org-unit "$root" --children --start-date 2023-01-01 --end-date 2024-12-31)
while read -r ds; do args+=(--data-set "$ds"); done < <(psql_q "SELECT uid FROM dataset ORDER BY uid")
for file in values.json values.csv.gz values.xml; do
  "$cli_bin" "${args[@]}" --server "$server" -o "$work/host.$file" 2>"$work/cli.log" ||
    { cat "$work/cli.log" >&2; fail "host export to $file"; }
  "$cli_bin" "${args[@]}" --server "127.0.0.1:$grpc_port" -o "$work/container.$file" \
    2>"$work/cli.log" || { cat "$work/cli.log" >&2; fail "container export to $file"; }
  cmp -s "$work/host.$file" "$work/container.$file" || fail "$file differs between host and container"
done
values=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["dataValues"]))' \
  "$work/host.values.json")
((values > 0)) || fail "the export has no values: is the demo database loaded?"
query="orgUnit=$root&children=true&startDate=2023-01-01&endDate=2024-12-31&dataSet=$(psql_q \
  "SELECT string_agg(uid, ',' ORDER BY uid) FROM dataset")"
curl -sS -f -o "$work/http.json" "http://127.0.0.1:$http_port/api/dataValueSets.json?$query" ||
  fail "DHIS2's URL on the container's HTTP door"
cmp -s "$work/host.values.json" "$work/http.json" ||
  fail "the HTTP door's JSON differs from the gRPC export's"
echo "export: $values values, identical through the container (gRPC and HTTP) and the host" >&2

# SIGTERM: the server's own shutdown, well within the Deployment's grace period.
started=$(date +%s%N)
podman stop -t 45 "$name" >/dev/null 2>>"$work/podman.log"
stopped_ms=$((($(date +%s%N) - started) / 1000000))
code=$(podman inspect -f '{{.State.ExitCode}}' "$name")
[[ "$code" == 0 ]] || fail "SIGTERM ended the container with exit code $code (137: killed)"
((stopped_ms < 10000)) || fail "SIGTERM took ${stopped_ms} ms to end an idle container"
echo "SIGTERM: exited 0 after ${stopped_ms} ms" >&2

# --auth dhis2 (the image's default): the demo admin's token, and a wrong one.
start_container "$name-auth"
"$cli_bin" "${args[@]}" --server "127.0.0.1:$grpc_port" -o "$work/token.values.json" \
  2>"$work/cli.log" || { cat "$work/cli.log" >&2; fail "export with the demo token"; }
cmp -s "$work/host.values.json" "$work/token.values.json" ||
  fail "the admin's export differs from the trusted one"
if DVEXPORT_TOKEN=d2p_notAValidTokenAtAllxxxxxxxxxxxxxxxxxxxxxx000000 "$cli_bin" "${args[@]}" \
  --server "127.0.0.1:$grpc_port" -o "$work/refused.json" 2>"$work/cli.log"; then
  fail "a wrong token was accepted"
fi
grep -q UNAUTHENTICATED "$work/cli.log" || { cat "$work/cli.log" >&2; fail "a wrong token's refusal"; }
echo "auth: the demo token is accepted, a wrong one refused" >&2
echo "PASS: image $image" >&2
