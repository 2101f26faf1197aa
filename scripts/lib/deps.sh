# shellcheck shell=bash
# Installs the Debian 12 packages dvexport needs to build, test and demo.
# Source it and call deps_install (or run it). Packages already installed are
# left alone; apt-get update runs only when something is missing.

DVEXPORT_APT_PACKAGES=(
  cmake ninja-build g++ ccache pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libpqxx-dev libpq-dev libabsl-dev zlib1g-dev libdeflate-dev libzstd-dev prometheus-cpp-dev libssl-dev
  libisal-dev  # ISA-L's igzip: gzip and zip deflate at levels 1-3, several times zlib's speed (service/encode)
  libboost1.81-dev libboost-url1.81-dev  # Boost.Beast (headers) and Boost.URL: the HTTP door (service/http)
  libgtest-dev libbenchmark-dev nlohmann-json3-dev libexpat1-dev
  postgresql python3 python3-yaml openssl unzip zstd
  pgbouncer  # tests only: tests/integration/pgbouncer_test (transaction pooling)
  python3-grpcio  # tests and scripts/bench only: grpcio clients (tests/reliability/slow_grpc_reader.py reads slowly, tools/bench/password_burst.py guesses passwords)
  libcrypt-dev  # libxcrypt's crypt_rn: DHIS2's bcrypt password hashes (service/auth/password)
  nginx  # tests: the front proxy of the header-flood test (docs/SECURITY.md)
  python3-requests  # tests only: tests/http_e2e (clients_test and nginx_proxy_test call the HTTP door as DHIS2's Python clients do)
  wrk  # scripts/bench only: 64 concurrent HTTP exports (the HTTP door under load)
  universal-ctags  # tests only: tests/structure_test.py reads every function's first and last line
)

deps_install() {
  local missing=() pkg
  for pkg in "${DVEXPORT_APT_PACKAGES[@]}"; do
    # dpkg -s also succeeds for removed packages whose config files remain.
    dpkg -s "$pkg" 2>/dev/null | grep -q '^Status: install ok installed' || missing+=("$pkg")
  done
  if ((${#missing[@]} == 0)); then
    return 0
  fi
  echo "deps: installing ${missing[*]}" >&2
  local sudo=()
  if [[ "$(id -u)" != 0 ]]; then
    if ! command -v sudo >/dev/null; then
      echo "deps: missing packages and not root (no sudo): ${missing[*]}" >&2
      return 1
    fi
    sudo=(sudo)
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing[@]}"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  deps_install
fi
