# shellcheck shell=bash
# shellcheck disable=SC2154  # $cli_bin and $work are the sourcing test's
# The export the container tests compare (kube_test.sh, compose_test.sh), as image_test.sh does:
# every data set of the demo database, the root with the most units below it and its children,
# 2023-2024, as JSON, gzipped CSV and XML over gRPC and as JSON on DHIS2's URL. Sourced after
# tests/e2e/lib.sh (fail, $work, DVEXPORT_TOKEN: the demo superuser's token); gives:
#   exports_compare HOST_SERVER GRPC_ADDRESS HTTP_BASE CONNINFO WHAT
#       exports through HOST_SERVER (the host's binaries) and through GRPC_ADDRESS (gRPC) and
#       HTTP_BASE (http://HOST:PORT, DHIS2's URL with the token) must be byte for byte the same;
#       CONNINFO names the database the demo is in; WHAT names the path in messages. Needs
#       $cli_bin. Prints how many values.

exports_psql() { psql "$1" -XAtq -c "$2"; }

exports_compare() {
  local host=$1 grpc=$2 http=$3 conninfo=$4 what=$5
  local root
  root=$(exports_psql "$conninfo" "SELECT o.uid FROM organisationunit o WHERE o.parentid IS NULL ORDER BY
    (SELECT count(*) FROM organisationunit c WHERE c.path LIKE o.path || '%') DESC, o.uid LIMIT 1")
  [[ -n "$root" ]] || fail "no organisation unit in the demo database ($conninfo)"
  local args=(export --org-unit "$root" --children --start-date 2023-01-01 --end-date 2024-12-31)
  local ds
  while read -r ds; do args+=(--data-set "$ds"); done < <(exports_psql "$conninfo" \
    "SELECT uid FROM dataset ORDER BY uid")
  local file
  for file in values.json values.csv.gz values.xml; do
    "$cli_bin" "${args[@]}" --server "$host" -o "$work/host.$file" 2>"$work/cli.log" ||
      { cat "$work/cli.log" >&2; fail "host export to $file"; }
    "$cli_bin" "${args[@]}" --server "$grpc" -o "$work/front.$file" 2>"$work/cli.log" ||
      { cat "$work/cli.log" >&2; fail "export to $file through $what (gRPC, $grpc)"; }
    cmp -s "$work/host.$file" "$work/front.$file" ||
      fail "$file differs between the host and $what (gRPC, $grpc)"
  done
  local values
  values=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["dataValues"]))' \
    "$work/host.values.json")
  ((values > 0)) || fail "the export has no values: is the demo database loaded?"
  local query
  query="orgUnit=$root&children=true&startDate=2023-01-01&endDate=2024-12-31&dataSet=$(exports_psql \
    "$conninfo" "SELECT string_agg(uid, ',' ORDER BY uid) FROM dataset")"
  curl -sS -f -D "$work/http.headers" -H "Authorization: ApiToken $DVEXPORT_TOKEN" \
    -o "$work/http.json" "$http/api/dataValueSets.json?$query" ||
    fail "DHIS2's URL through $what ($http)"
  cmp -s "$work/host.values.json" "$work/http.json" ||
    fail "the JSON on DHIS2's URL through $what differs from the host's gRPC export"
  # nginx answers (its own Server header): the request went through it, not around it.
  grep -qi '^Server: nginx' "$work/http.headers" ||
    fail "DHIS2's URL through $what: no nginx in front ($(grep -i '^Server:' "$work/http.headers"))"
  echo "export: $values values, identical through $what (gRPC and DHIS2's URL) and the host" >&2
}
