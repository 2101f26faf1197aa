# shellcheck shell=bash
# Configures and builds dvexport with CMake and Ninja. Source it and call
# build_project (or run it). BUILD_TYPE picks the CMake build type (default
# RelWithDebInfo) and BUILD_DIR the directory (default <repo>/build;
# scripts/demo and scripts/bench use <repo>/build-release, without tests).
# Extra arguments go to cmake at configure time.

DVEXPORT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# ccache (used when installed): paths inside the checkout are hashed relative
# to it, so that clones in other directories (CI's) reuse the same entries.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$DVEXPORT_ROOT}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"

build_project() {
  local type="${BUILD_TYPE:-RelWithDebInfo}"
  local dir="${BUILD_DIR:-$DVEXPORT_ROOT/build}"
  cmake -S "$DVEXPORT_ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" "$@"
  cmake --build "$dir" -j"$(nproc)"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  build_project
fi
