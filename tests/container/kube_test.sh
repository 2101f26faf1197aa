#!/usr/bin/env bash
# deploy/k8s run as far as one machine allows: podman kube play (tests/container/podman.sh) of the
# Deployment and the Service, as tests/container/kube_manifest.py renders them (the image just
# built, one replica, the host's network, nginx-http's DHIS2 a stand-in), with the Secret
# "dvexport-db" of secret.example.yaml's keys made as podman reads it. Then checks:
#   - the pod's three containers run as uid 10001 on read-only root filesystems; the server
#     listens on 127.0.0.1 only (gRPC and HTTP door), nginx on the ports clients use;
#   - every readiness and liveness probe of the manifest passes, run as the kubelet would, at the
#     pod's address (the host's, not loopback: a probe on the server's loopback port fails): a
#     grpc probe as grpc.health.v1.Health/Check on the port (dvexport health), a tcpSocket probe as
#     a connect (podman 4.3 runs none of them: it ignores grpc probes and readinessProbe, and turns
#     tcpSocket into a broken "nc" command; what it made of each is printed);
#   - an export through nginx (gRPC on 50051, DHIS2's URL on 8080) is byte for byte the host's
#     binaries' one; other DHIS2 paths reach DHIS2; a request header past nginx's tested limit
#     (16 KiB) is refused by nginx;
#   - stopping the pod ends the server by its own shutdown (exit 0).
# HPA and PDB have no podman equivalent: deploy.validate lints them.
# Exits 77 (ctest's skip) with the reason where podman or the base images cannot be made.
# Usage: kube_test.sh SERVER_BINARY CLI_BINARY   (DVEXPORT_TEST_PG set)
set -euo pipefail
server_bin=$1
cli_bin=$2
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$repo/tests/container"

# shellcheck source=tests/e2e/lib.sh
source "$repo/tests/e2e/lib.sh"
# shellcheck source=tests/container/podman.sh
source "$here/podman.sh"
# shellcheck source=tests/container/exports.sh
source "$here/exports.sh"

podman_ready_or_skip
image="${DVEXPORT_TEST_IMAGE:-localhost/dvexport:test}"
podman_image_build "$repo" "$image" "$work/build.log" || fail "the image"

pod=dvexport-pod-0  # podman's name for the Deployment "dvexport"'s first replica
standin_pid=
cleanup_pod() {
  podman pod rm -f -t 0 "$pod" >/dev/null 2>&1 || true
  podman secret rm dvexport-db >/dev/null 2>&1 || true
  [[ -n "$standin_pid" ]] && kill "$standin_pid" 2>/dev/null
  cleanup
}
trap cleanup_pod EXIT
# Left by an interrupted run (this is the tests' own podman storage).
podman pod rm -f -t 0 "$pod" >/dev/null 2>&1 || true
podman secret rm dvexport-db >/dev/null 2>&1 || true

# The host's network: the manifest's ports are the host's.
for port in 50051 50052 8080 8081 9464; do
  if (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    fail "port $port is taken on this machine: the pod needs it (host network)"
  fi
done

# DHIS2 for nginx-http: the stand-in of http_e2e.nginx_proxy, which names itself in its answers.
python3 "$repo/tests/http_e2e/dhis2_standin.py" --port-file "$work/standin_port" &
standin_pid=$!
for _ in $(seq 1 100); do [[ -s "$work/standin_port" ]] && break; sleep 0.1; done
[[ -s "$work/standin_port" ]] || fail "the DHIS2 stand-in did not start"

# The Secret's values (secret.example.yaml's keys): the test database; its role needs no password.
DVEXPORT_PG="$DVEXPORT_TEST_PG application_name=dvexport" PASSWORD="${PGPASSWORD:-unused}" \
  python3 -c 'import json, os
print(json.dumps({"conninfo": os.environ["DVEXPORT_PG"], "password": os.environ["PASSWORD"]}))' \
  >"$work/secret_values.json"
python3 "$here/kube_manifest.py" "$repo" "$image" "127.0.0.1:$(cat "$work/standin_port")" \
  "$work/secret_values.json" "$work" || fail "kube_manifest.py"
podman secret create dvexport-db "$work/secret.json" >/dev/null

started=$(date +%s)
timeout 300 podman kube play "$work/kube.yaml" >"$work/play.log" 2>&1 ||
  { cat "$work/play.log" >&2; fail "podman kube play"; }
containers=(dvexport nginx-grpc nginx-http)
for c in "${containers[@]}"; do
  state=$(podman inspect -f '{{.State.Status}}' "$pod-$c" 2>/dev/null || true)
  [[ "$state" == running ]] || { podman logs "$pod-$c" >&2 || true; fail "container $c is '$state'"; }
done
echo "podman kube play: pod $pod, containers ${containers[*]} running" >&2

# --- what podman made of the probes; the probes as the kubelet runs them ---
for c in "${containers[@]}"; do
  made=$(podman inspect -f '{{json .Config.Healthcheck}}' "$pod-$c")
  ran=
  if [[ "$made" != null ]]; then
    ran=unhealthy
    podman healthcheck run "$pod-$c" >/dev/null 2>&1 && ran=healthy
    ran="; podman healthcheck run: $ran"
  fi
  echo "podman's healthcheck of $c: $made$ran" >&2
done
# The kubelet probes the pod's address, not its loopback: here the host's (host network).
pod_ip=$(hostname -I | awk '{print $1}')
[[ -n "$pod_ip" ]] || fail "this machine has no address but loopback: the probes need one"
probe() {  # KIND PORT TIMEOUT_S
  case "$1" in
    grpc) timeout "$3" "$cli_bin" health --server "$pod_ip:$2" >/dev/null 2>&1 ;;
    tcpSocket) timeout "$3" bash -c "exec 3<>/dev/tcp/$pod_ip/$2" 2>/dev/null ;;
    *) fail "kube_test.sh runs no $1 probe: add it" ;;
  esac
}
while IFS=$'\t' read -r container kind_of probe_kind port delay timeout_s; do
  # Readiness within 30 s of the pod's start; liveness once its initial delay is over.
  if [[ "$kind_of" == livenessProbe ]]; then
    elapsed=$(($(date +%s) - started))
    ((elapsed >= delay)) || sleep $((delay - elapsed))
  fi
  passed=
  for _ in $(seq 1 60); do
    if probe "$probe_kind" "$port" "$timeout_s"; then passed=1 && break; fi
    sleep 0.5
  done
  if [[ -z "$passed" ]]; then
    for c in "${containers[@]}"; do podman logs --tail 5 "$pod-$c" >&2 || true; done
    fail "$container's $kind_of ($probe_kind on $port) fails"
  fi
  echo "probe: $container $kind_of ($probe_kind on $pod_ip:$port) passes" >&2
done <"$work/probes.tsv"

# --- users, root filesystems, who listens where ---
for c in "${containers[@]}"; do
  [[ "$(podman exec "$pod-$c" id -u)" == 10001 ]] || fail "$c does not run as uid 10001"
  [[ "$(podman inspect -f '{{.HostConfig.ReadonlyRootfs}}' "$pod-$c")" == true ]] ||
    fail "$c's root filesystem is writable"
done
# The emptyDir on /tmp: one volume, shared (each nginx has its prefix in it).
for c in dvexport nginx-http; do
  podman exec "$pod-$c" test -f /tmp/nginx-grpc/nginx.pid ||
    fail "$c does not see nginx-grpc's /tmp: the emptyDir is not shared"
done
listeners() { ss -ltnpH "sport = :$1" | awk '{print $4, $6}'; }
for port in 50052 8081; do
  bound=$(listeners "$port")
  # gRPC binds 127.0.0.1 as an IPv6 socket: [::ffff:127.0.0.1].
  if [[ ! "$bound" =~ ^(127\.0\.0\.1|\[::ffff:127\.0\.0\.1\]):$port\ .*dvexport-server ]] ||
    [[ $(wc -l <<<"$bound") != 1 ]]; then
    fail "the server's port $port is not on 127.0.0.1 alone: $bound"
  fi
done
for port in 50051 8080; do
  [[ "$(listeners "$port")" =~ ^(0\.0\.0\.0|\*):$port\ .*nginx ]] ||
    fail "port $port is not nginx's: $(listeners "$port")"
done
echo "uid 10001, read-only root filesystems, /tmp shared; server on 127.0.0.1:50052 and" \
  ":8081, nginx on 50051 and 8080" >&2

# --- exports through nginx, the rest to DHIS2, nginx's limits ---
start_server "$server_bin"
exports_compare "$server" 127.0.0.1:50051 http://127.0.0.1:8080 "$DVEXPORT_TEST_PG" "the pod's nginx"
curl -sS -f -D "$work/me.headers" -o /dev/null http://127.0.0.1:8080/api/me ||
  fail "/api/me through nginx-http"
grep -qi '^X-Stand-In: dhis2' "$work/me.headers" || fail "/api/me did not reach DHIS2"
big=$(head -c 20000 /dev/zero | tr '\0' a)
code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $big" http://127.0.0.1:8080/api/me || true)
[[ "$code" == 400 ]] || fail "a 20 KB request header reached past nginx-http (HTTP $code, not 400)"
echo "nginx-http: /api/me reaches DHIS2, a 20 KB header is refused (400)" >&2

# --- stopping the pod: the server's own shutdown ---
podman pod stop -t 45 "$pod" >/dev/null 2>&1
code=$(podman inspect -f '{{.State.ExitCode}}' "$pod-dvexport")
[[ "$code" == 0 ]] || fail "stopping the pod ended the server with exit code $code (137: killed)"
echo "pod stop: the server exited 0" >&2
echo "PASS: podman kube play of deploy/k8s (image $image)" >&2
