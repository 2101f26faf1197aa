# shellcheck shell=bash
# Configures and builds dvexport with CMake and Ninja into <repo>/build.
# Source it and call build_project (or run it). BUILD_TYPE picks the CMake
# build type (default RelWithDebInfo; scripts/demo uses Release).

DVEXPORT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

build_project() {
  local type="${BUILD_TYPE:-RelWithDebInfo}"
  cmake -S "$DVEXPORT_ROOT" -B "$DVEXPORT_ROOT/build" -G Ninja -DCMAKE_BUILD_TYPE="$type"
  cmake --build "$DVEXPORT_ROOT/build" -j"$(nproc)"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  build_project
fi
