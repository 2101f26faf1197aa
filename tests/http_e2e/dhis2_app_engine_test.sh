#!/usr/bin/env bash
# DHIS2's own JavaScript client, unchanged, against dvexport-server's HTTP door on a DHIS2 2.43
# database (DVEXPORT_TEST_PG_243, which scripts/test loads): the app data engine of
# @dhis2/app-service-data (its DataProvider's RestAPILink and DataEngine, from @dhis2/data-engine),
# with { baseUrl, apiVersion: 43, apiToken }, queries /api/43/dataValueSets as a DHIS2 app does
# (dhis2_app_engine/engine_export.js); dhis2_app_engine_test.py checks what it sent and got
# against curl of the same URLs and against the database (psql).
#
# The engine comes from npm, pinned by dhis2_app_engine/package-lock.json, installed with
# `npm ci` into NPM_DIR (the build tree; again only when the lockfile changed). Exits 77
# (skipped) when node (>= 18: global fetch) or npm is missing or the packages cannot be
# installed (no npm registry).
# Usage: dhis2_app_engine_test.sh SERVER_BINARY NPM_DIR   (DVEXPORT_TEST_PG, _243 set)
set -euo pipefail
server_bin=$1
npm_dir=$2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
package="$here/dhis2_app_engine"

# shellcheck source=tests/http_e2e/lib.sh
source "$here/lib.sh"
[[ -n "${DVEXPORT_TEST_PG_243:-}" ]] ||
  fail "DVEXPORT_TEST_PG_243 is not set (run through scripts/test)"

skip() {
  echo "SKIP: $*"
  exit 77
}
command -v node >/dev/null || skip "node is not installed (DHIS2's app engine runs on node >= 18)"
command -v npm >/dev/null || skip "npm is not installed (it installs @dhis2/app-service-data)"
node_major=$(node -p 'process.versions.node.split(".")[0]')
((node_major >= 18)) ||
  skip "node $(node --version) has no global fetch, which DHIS2's engine calls (node >= 18 has)"

started=$SECONDS
mkdir -p "$npm_dir"
if ! cmp -s "$package/package-lock.json" "$npm_dir/installed-package-lock.json" ||
  [[ ! -d "$npm_dir/node_modules/@dhis2/app-service-data" ]]; then
  rm -f "$npm_dir/installed-package-lock.json"
  cp "$package/package.json" "$package/package-lock.json" "$npm_dir/"
  if ! (cd "$npm_dir" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error) \
    >"$work/npm.log" 2>&1; then
    tail -n 20 "$work/npm.log"
    skip "npm ci could not install @dhis2/app-service-data from the npm registry (above)"
  fi
  cp "$package/package-lock.json" "$npm_dir/installed-package-lock.json"
  echo "npm ci: @dhis2/app-service-data installed in $((SECONDS - started)) s"
fi
# Next to its node_modules, so that node finds the packages as an app's bundler does.
cp "$package/engine_export.js" "$npm_dir/engine_export.js"

DVEXPORT_TEST_PG=$DVEXPORT_TEST_PG_243 start_http_server main "$server_bin"

python3 "$here/dhis2_app_engine_test.py" --engine "$npm_dir/engine_export.js" \
  --base "http://$http" --token "$admin_token" --pg "$DVEXPORT_TEST_PG_243" --work "$work" ||
  { echo "server log:" >&2; tail -n 20 "$work/main/server.log" >&2; exit 1; }
echo "total: $((SECONDS - started)) s"
