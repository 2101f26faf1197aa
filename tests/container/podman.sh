# shellcheck shell=bash
# podman as this project runs it (tests/container, scripts/test-container): Debian's podman as root
# with the vfs storage driver, runc, cgroupfs and host networking, and no default ulimits (crun and
# podman's default ulimits are refused on the CI machines); its own configuration and storage under
# $DVEXPORT_PODMAN_STATE (default /var/tmp/dvexport-podman: layers are kept between runs). The
# base images the Dockerfile names (debian:12, debian:12-slim) are made from Debian's archive with
# mmdebstrap (no registry is reachable, none is needed). Sourced after "set -euo pipefail"; gives:
#   podman_setup        writes the configuration, exports CONTAINERS_CONF and friends; returns 77
#                       (with the reason on stderr) where podman cannot run here
#   podman_base_images  makes docker.io/library/debian:12 and debian:12-slim where missing
#   podman_image_build  builds deploy/docker/Dockerfile (below)

DVEXPORT_PODMAN_STATE="${DVEXPORT_PODMAN_STATE:-/var/tmp/dvexport-podman}"

podman_setup() {
  if [[ "$(id -u)" != 0 ]]; then
    echo "podman runs as root here (vfs storage, runc): run as root" >&2
    return 77
  fi
  local tool
  for tool in podman runc mmdebstrap newuidmap; do
    if ! command -v "$tool" >/dev/null; then
      echo "$tool is not installed (apt-get install podman runc uidmap mmdebstrap)" >&2
      return 77
    fi
  done
  local conf="$DVEXPORT_PODMAN_STATE/conf"
  mkdir -p "$conf" "$DVEXPORT_PODMAN_STATE/storage" "$DVEXPORT_PODMAN_STATE/run"
  cat >"$conf/containers.conf" <<CONF
[containers]
default_ulimits = []
netns = "host"
log_driver = "k8s-file"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
  cat >"$conf/storage.conf" <<CONF
[storage]
driver = "vfs"
graphroot = "$DVEXPORT_PODMAN_STATE/storage"
runroot = "$DVEXPORT_PODMAN_STATE/run"
CONF
  # Short names ("debian:12") are the local images; nothing is pulled (--pull=never).
  cat >"$conf/registries.conf" <<CONF
unqualified-search-registries = ["docker.io"]
short-name-mode = "permissive"
CONF
  export CONTAINERS_CONF="$conf/containers.conf"
  export CONTAINERS_STORAGE_CONF="$conf/storage.conf"
  export CONTAINERS_REGISTRIES_CONF="$conf/registries.conf"
  local info
  if ! info=$(podman info 2>&1); then
    echo "podman cannot run here: $(tail -n 1 <<<"$info")" >&2
    return 77
  fi
}

# The machine's own apt sources, so that the images fetch from the mirror the machine reaches.
podman_apt_sources() {
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    echo /etc/apt/sources.list.d/debian.sources
  elif [[ -s /etc/apt/sources.list ]]; then
    echo /etc/apt/sources.list
  else
    echo http://deb.debian.org/debian
  fi
}

# As Debian's official images: PATH set in the image (podman kube play, unlike podman run, adds
# no default PATH, and the Deployment's commands name dvexport-nginx by its name).
PODMAN_BASE_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

podman_base_image() {
  local name=$1
  shift
  local ref="docker.io/library/$name"
  if podman image exists "$ref"; then
    # Made by an earlier version of this file, without PATH: add it (no new root filesystem).
    if ! podman image inspect -f '{{.Config.Env}}' "$ref" | grep -q 'PATH='; then
      printf 'FROM %s\nENV PATH=%s\n' "$ref" "$PODMAN_BASE_PATH" |
        podman build --quiet --pull=never --format docker -t "$ref" -f - >/dev/null
    fi
    return 0
  fi
  local tar="$DVEXPORT_PODMAN_STATE/${name/:/-}.tar"
  echo "podman: making $name from Debian's archive (mmdebstrap --variant=minbase bookworm)" >&2
  mmdebstrap --variant=minbase --quiet "$@" bookworm "$tar" "$(podman_apt_sources)" >&2
  podman import --quiet --change 'CMD ["bash"]' --change "ENV PATH=$PODMAN_BASE_PATH" "$tar" \
    "$ref" >/dev/null
  rm -f "$tar"
}

podman_base_images() {
  podman_base_image debian:12
  # As Debian's own slim images: no documentation but the copyrights, no manual pages, no locales.
  podman_base_image debian:12-slim --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*'
}

# podman_image_build REPO IMAGE LOG: builds deploy/docker/Dockerfile as IMAGE (layers kept between
# runs: the tests after the first find them all), its output in LOG; with
# DVEXPORT_TEST_IMAGE_BUILT=1 takes IMAGE as it is (an image built otherwise, or broken on purpose).
podman_image_build() {
  local repo=$1 image=$2 log=$3
  if [[ "${DVEXPORT_TEST_IMAGE_BUILT:-}" != 1 ]]; then
    echo "building $image from deploy/docker/Dockerfile" >&2
    local started
    started=$(date +%s)
    # Docker's format: OCI images have no HEALTHCHECK.
    if ! podman build --format docker --pull=never --network host \
      -f "$repo/deploy/docker/Dockerfile" -t "$image" "$repo" >"$log" 2>&1; then
      tail -n 40 "$log" >&2
      echo "podman build failed" >&2
      return 1
    fi
    echo "built in $(($(date +%s) - started)) s" >&2
  fi
  podman image exists "$image" || { echo "no image $image" >&2; return 1; }
}

# podman_ready_or_skip: podman_setup, then the base images; where either fails, ends the calling
# test with ctest's skip (77, or podman_setup's own status) and the reason.
podman_ready_or_skip() {
  local status=0
  podman_setup || status=$?
  if ((status != 0)); then
    echo "SKIPPED: podman cannot run here (above)" >&2
    exit "$status"
  fi
  if ! podman_base_images; then
    echo "SKIPPED: the base images could not be made from Debian's archive" >&2
    exit 77
  fi
}
