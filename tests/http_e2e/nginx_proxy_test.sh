#!/usr/bin/env bash
# Debian's nginx with deploy/nginx/dhis2-dataValueSets.conf (the file docs/DEPLOYMENT.md shows,
# its addresses replaced) in front of dvexport-server's HTTP door and a stand-in for the rest of
# DHIS2 (dhis2_standin.py): exports (GET and HEAD of /api/dataValueSets, .json, .csv,
# /api/41/...) reach dvexport and give the CLI's bytes; imports, /api/me, unmapped versions and
# requests without credentials reach the stand-in; a redirect from DHIS2 to the export is
# followed with the credentials kept; exports stream through nginx at the client's pace
# (proxy_buffering off) instead of being spooled; X-Forwarded-For set by nginx is believed only
# by a server started with --http_trusted_proxies 127.0.0.1; an export cut off upstream reaches
# the client without its last chunk.
# Usage: nginx_proxy_test.sh SERVER_BINARY CLI_BINARY   (DVEXPORT_TEST_PG set)
set -euo pipefail
server_bin=$1
cli_bin=$2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
template="$here/../../deploy/nginx/dhis2-dataValueSets.conf"
nginx_bin=/usr/sbin/nginx

# shellcheck source=tests/http_e2e/lib.sh
source "$here/lib.sh"

if [[ ! -x "$nginx_bin" ]]; then
  echo "SKIP: $nginx_bin is not installed (scripts/lib/deps.sh installs nginx)"
  exit 77
fi
if ! python3 -c 'import requests' 2>/dev/null; then
  echo "SKIP: python3-requests is not installed (scripts/lib/deps.sh installs it)"
  exit 77
fi

# docs/DEPLOYMENT.md shows this very file, unchanged.
python3 - "$template" "$here/../../docs/DEPLOYMENT.md" <<'PY' || fail "docs/DEPLOYMENT.md does not show deploy/nginx/dhis2-dataValueSets.conf as it is"
import re, sys
conf, doc = (open(p, encoding="utf-8").read() for p in sys.argv[1:])
m = re.search(r"<!-- deploy/nginx/dhis2-dataValueSets.conf: begin -->\n```nginx\n(.*?)```\n"
              r"<!-- deploy/nginx/dhis2-dataValueSets.conf: end -->", doc, re.S)
assert m and m.group(1) == conf
PY

# Server "plain" believes no X-Forwarded-For; server "trusting" believes it from 127.0.0.0/29,
# which holds 127.0.0.1, the address nginx connects from, and the test's clients 127.0.0.2 to
# .7: clients inside the trusted range, as on a proxy's own network. Both refuse an address
# after 3 failed authentications, which shows which address each believes.
start_http_server trusting "$server_bin" --read_streams 1 --auth_max_failures_per_ip 3 \
  --http_trusted_proxies 127.0.0.0/29
trusting_http_port=$http_port

# Server "big": the streaming check's, on a private PostgreSQL whose values carry 6 KB comments
# (tests/reliability/private_pg.sh: whole exports of ~60 MB, more than the socket buffers on the
# way hold), stopped by its watchdog once this script has ended.
"$here/../reliability/private_pg.sh" start "$work/big_pg.env" $$ ||
  fail "the private PostgreSQL did not start"
big_pg="$(sed -n 's/^READER=//p' "$work/big_pg.env")"
DVEXPORT_TEST_PG="$big_pg" start_http_server big "$server_bin" --read_streams 1
big_http_port=$http_port
start_http_server plain "$server_bin" --read_streams 1 --auth_max_failures_per_ip 3
plain_http_port=$http_port
plain_pid=$server_pid

mkdir -p "$work/expected"
q1=(--data-set JurnHCkmDCn --period 202401 --org-unit ImspTQPwCqd --children)
for file in q1.json q1.csv; do cli_export "$work/expected/$file" "${q1[@]}"; done
grep -q '"dataElement":' "$work/expected/q1.json" || fail "the CLI exported no values"

spawn python3 "$here/dhis2_standin.py" --port-file "$work/standin_port"
for _ in $(seq 1 100); do [[ -s "$work/standin_port" ]] && break; sleep 0.1; done
[[ -s "$work/standin_port" ]] || fail "the DHIS2 stand-in did not start"
standin_port=$(cat "$work/standin_port")

# replace_once FILE TEXT REPLACEMENT: the template must hold TEXT exactly once.
replace_once() {
  local count
  count=$(grep -cF -- "$2" "$1" || true)
  [[ "$count" == 1 ]] || fail "$(basename "$1"): '$2' found $count times, expected once"
  TEXT="$2" REPLACEMENT="$3" python3 -c 'import os, sys
p = sys.argv[1]
s = open(p).read()
open(p, "w").write(s.replace(os.environ["TEXT"], os.environ["REPLACEMENT"]))' "$1"
}
# start_nginx NAME DVEXPORT_HTTP_PORT: nginx from the template on a free port ($nginx_port),
# its prefix, logs, pid and temporary files in $work/nginx-NAME.
start_nginx() {
  local dir="$work/nginx-$1" port
  mkdir -p "$dir"
  for _ in 1 2 3; do
    port=$(free_port)
    cp "$template" "$dir/nginx.conf"
    # A small send buffer towards the client (sndbuf), so that the small demo database's exports
    # outgrow what the kernel holds on the way and the streaming check sees nginx's pace.
    replace_once "$dir/nginx.conf" "listen 80;" "listen 127.0.0.1:$port sndbuf=16k;"
    replace_once "$dir/nginx.conf" "server 127.0.0.1:8081;" "server 127.0.0.1:$2;"
    replace_once "$dir/nginx.conf" "server 127.0.0.1:8080;" "server 127.0.0.1:$standin_port;"
    "$nginx_bin" -t -q -p "$dir/" -c nginx.conf -e "$dir/error.log" -g "pid $dir/nginx.pid;" ||
      fail "nginx -t: $(cat "$dir/error.log")"
    spawn "$nginx_bin" -p "$dir/" -c nginx.conf -e "$dir/error.log" \
      -g "daemon off; pid $dir/nginx.pid;"
    for _ in $(seq 1 50); do
      if curl -s -o /dev/null "http://127.0.0.1:$port/"; then
        nginx_port=$port
        return 0
      fi
      sleep 0.1
    done
  done
  fail "nginx did not start: $(cat "$dir/error.log")"
}
start_nginx plain "$plain_http_port"
plain_nginx_port=$nginx_port
start_nginx trusting "$trusting_http_port"
trusting_nginx_port=$nginx_port
start_nginx big "$big_http_port"
big_nginx_port=$nginx_port

python3 "$here/nginx_proxy_test.py" --expected "$work/expected" --token "$admin_token" \
  --password "$admin_password" \
  --plain-nginx "$plain_nginx_port" --plain-log "$work/plain/server.log" --plain-pid "$plain_pid" \
  --trusting-nginx "$trusting_nginx_port" \
  --trusting-http "$trusting_http_port" \
  --big-nginx "$big_nginx_port" --big-log "$work/big/server.log" ||
  { tail -n 20 "$work"/nginx-*/error.log >&2 || true; fail "nginx_proxy_test.py"; }

# The same export with curl through nginx as DHIS2's docs call DHIS2 itself.
curl -sS -f -u "admin:$admin_password" -o "$work/curl.csv" \
  "http://127.0.0.1:$trusting_nginx_port/api/dataValueSets.csv?dataSet=JurnHCkmDCn&period=202401&orgUnit=ImspTQPwCqd&children=true" ||
  fail "curl through nginx"
cmp -s "$work/curl.csv" "$work/expected/q1.csv" || fail "curl through nginx: not the CLI's CSV"
echo "nginx_proxy_test: exports through nginx stream the CLI's bytes; the rest reaches DHIS2"
