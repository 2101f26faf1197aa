#!/usr/bin/env bash
# TLS end to end through the real binaries: certificates made by openssl now,
# dvexport-server with --tls_cert/--tls_key/--tls_client_ca, the dvexport CLI
# with --tls-ca/--tls-cert/--tls-key. Plaintext and certificate-less clients
# must be refused; bad TLS files must be named with what is wrong with them.
# Usage: cli_tls_test.sh SERVER_BINARY CLI_BINARY   (DVEXPORT_TEST_PG set)
set -euo pipefail
server_bin=$(realpath "$1")
cli_bin=$(realpath "$2")

# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cd "$work"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=dvexport test CA" \
  -keyout ca.key -out ca.pem 2>/dev/null
make_cert() {  # name subject-alt-names
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$1" -keyout "$1.key" -out "$1.csr" 2>/dev/null
  printf 'subjectAltName=%s\n' "$2" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
    -extfile "$1.ext" -out "$1.pem" 2>/dev/null
}
make_cert server "IP:127.0.0.1,DNS:localhost"
make_cert client "DNS:client"

start_server "$server_bin" --tls_cert server.pem --tls_key server.key --tls_client_ca ca.pem
tls=(--tls-ca ca.pem --tls-cert client.pem --tls-key client.key)

"$cli_bin" health --server "$server" "${tls[@]}" --timeout 20 >health.out 2>&1 ||
  { cat health.out >&2; fail "health over mutual TLS"; }
grep -qx SERVING health.out || fail "health says $(cat health.out)"

psql_q() { psql "$DVEXPORT_TEST_PG" -XAtq -c "$1"; }
data_set=$(psql_q "SELECT uid FROM dataset ORDER BY uid LIMIT 1")
root=$(psql_q "SELECT o.uid FROM organisationunit o WHERE o.parentid IS NULL ORDER BY
  (SELECT count(*) FROM organisationunit c WHERE c.path LIKE o.path || '%') DESC, o.uid LIMIT 1")
args=(export --server "$server" --data-set "$data_set" --org-unit "$root" --children
  --start-date 2000-01-01 --end-date 2030-12-31)
"$cli_bin" "${args[@]}" "${tls[@]}" -o values.json 2>cli.log || { cat cli.log >&2; fail "export over mutual TLS"; }
count=$("$cli_bin" count --server "$server" "${args[@]:3}" "${tls[@]}")
(( count > 0 )) || fail "nothing to export: is the demo database loaded?"
python3 -c 'import json, sys; n = len(json.load(open("values.json"))["dataValues"]); assert n == int(sys.argv[1]), (n, sys.argv[1])' "$count"

# Refused: a plaintext client, and a TLS client without a certificate.
if "$cli_bin" health --server "$server" --timeout 5 >/dev/null 2>plain.err; then
  fail "a plaintext client was served"
fi
if "$cli_bin" "${args[@]}" --tls-ca ca.pem --timeout 5 -o nocert.json 2>nocert.err; then
  fail "a client without a certificate was served"
fi
[[ ! -e nocert.json ]] || fail "a refused export left a file"

# Bad TLS files: each message names the file and what is wrong with it.
printf 'not a certificate\n' >garbage.pem
expect_refusal() {  # expected-message command...
  local want=$1 status=0
  shift
  "$@" >refusal.out 2>&1 || status=$?
  ((status != 0)) || fail "$* succeeded"
  grep -qF -- "$want" refusal.out || fail "$*: wanted '$want', got: $(cat refusal.out)"
  ! grep -q "empty address list\|cannot listen" refusal.out || fail "$*: $(cat refusal.out)"
}
expect_refusal "the TLS CA file garbage.pem: not PEM" \
  "$cli_bin" health --server "$server" --tls-ca garbage.pem --timeout 5
expect_refusal "the TLS key file ca.key: the private key does not match the certificate in the TLS certificate file client.pem" \
  "$cli_bin" health --server "$server" --tls-ca ca.pem --tls-cert client.pem --tls-key ca.key
expect_refusal "--tls_cert garbage.pem: not PEM" \
  "$server_bin" --listen 127.0.0.1:0 --pg "$DVEXPORT_TEST_PG" --tls_cert garbage.pem --tls_key server.key
expect_refusal "--tls_cert server.key: holds no CERTIFICATE block (it holds PRIVATE KEY)" \
  "$server_bin" --listen 127.0.0.1:0 --pg "$DVEXPORT_TEST_PG" --tls_cert server.key --tls_key server.key
expect_refusal "--tls_key client.key: the private key does not match the certificate in --tls_cert server.pem" \
  "$server_bin" --listen 127.0.0.1:0 --pg "$DVEXPORT_TEST_PG" --tls_cert server.pem --tls_key client.key
expect_refusal "--tls_key missing.key: cannot read it: No such file or directory" \
  "$server_bin" --listen 127.0.0.1:0 --pg "$DVEXPORT_TEST_PG" --tls_cert server.pem --tls_key missing.key
expect_refusal "--tls_client_ca server.key: holds no CERTIFICATE block" \
  "$server_bin" --listen 127.0.0.1:0 --pg "$DVEXPORT_TEST_PG" --tls_cert server.pem --tls_key server.key \
  --tls_client_ca server.key
# A FIFO given as a TLS file once blocked both binaries in open(2) forever (the server then
# ignored SIGTERM too): refused at once, naming the flag and the file ("timeout" turns a hang
# into a failure).
mkfifo fifo.pem
expect_refusal "the TLS CA file fifo.pem: not a regular file (a FIFO)" \
  timeout 10 "$cli_bin" health --server "$server" --tls-ca fifo.pem --timeout 5
expect_refusal "the TLS certificate file fifo.pem: not a regular file (a FIFO)" \
  timeout 10 "$cli_bin" health --server "$server" --tls-ca ca.pem --tls-cert fifo.pem --tls-key client.key
expect_refusal "the TLS key file fifo.pem: not a regular file (a FIFO)" \
  timeout 10 "$cli_bin" health --server "$server" --tls-ca ca.pem --tls-cert client.pem --tls-key fifo.pem
expect_refusal "--tls_cert fifo.pem: not a regular file (a FIFO)" \
  timeout 10 "$server_bin" --listen 127.0.0.1:0 --pg "$DVEXPORT_TEST_PG" --tls_cert fifo.pem --tls_key server.key
expect_refusal "--tls_key fifo.pem: not a regular file (a FIFO)" \
  timeout 10 "$server_bin" --listen 127.0.0.1:0 --pg "$DVEXPORT_TEST_PG" --tls_cert server.pem --tls_key fifo.pem
expect_refusal "--tls_client_ca fifo.pem: not a regular file (a FIFO)" \
  timeout 10 "$server_bin" --listen 127.0.0.1:0 --pg "$DVEXPORT_TEST_PG" --tls_cert server.pem --tls_key server.key \
  --tls_client_ca fifo.pem
echo "cli_tls_test: $count values over mutual TLS; plaintext and certificate-less clients refused; bad TLS files named"
