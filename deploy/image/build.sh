#!/usr/bin/env bash
# Builds localhost/faultwin:nightly (deploy/image/Containerfile) with podman,
# from nothing but this machine's apt mirror: no registry is reachable, so
# the base is a Debian rootfs made by debootstrap and imported into podman
# (localhost/faultwin-base:bookworm), kept across builds.
#
# The image holds a fresh clone of HEAD at /src/faultwin with its .git and
# bin/ built by `make build` in that clone: rows record the run's commit,
# whether its tree is dirty and each window's registration commit from git
# history, so the binaries must be the commit's and the tree clean, whatever
# the working tree here holds. Uncommitted changes are not in the image.
#
# Environment: IMAGE (default localhost/faultwin:nightly), BASE (default
# localhost/faultwin-base:bookworm), REBUILD_BASE=1 to debootstrap again,
# WORK (default out/image, the build context).
set -euo pipefail

IMAGE=${IMAGE:-localhost/faultwin:nightly}
BASE=${BASE:-localhost/faultwin-base:bookworm}
SUITE=bookworm
CRIU_PREFIX=/opt/faultwin/criu
CRIU_VERSION=4.2.1
here=$(cd "$(dirname "$0")" && pwd)
top=$(git -C "$here" rev-parse --show-toplevel)
WORK=${WORK:-$top/out/image}
log() { echo "image: $*"; }
die() { echo "image: $*" >&2; exit 1; }

[[ $(id -u) == 0 ]] || die "needs root (debootstrap, rootful podman storage): sudo make image"
for t in podman debootstrap git; do
  command -v "$t" >/dev/null || die "$t not found: sudo make deps"
done
"$CRIU_PREFIX/sbin/criu" --version 2>/dev/null | grep -q "Version: $CRIU_VERSION\$" ||
  die "no CRIU $CRIU_VERSION at $CRIU_PREFIX: sudo make deps (scripts/install-criu.sh)"

# The machine's Debian mirror, as scripts/install-criu.sh reads it: never
# written into this repository, only passed to debootstrap.
mirror() {
  local f uri=""
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] || continue
    uri=$(awk '
      /^[[:space:]]*$/ { if (u != "" && u !~ /security/) { print u; found=1; exit } u=""; next }
      /^URIs:/ { u=$2 }
      END { if (!found && u != "" && u !~ /security/) print u }' "$f")
    [[ -n $uri ]] && break
  done
  if [[ -z $uri && -f /etc/apt/sources.list ]]; then
    uri=$(awk '$1=="deb" && $0 !~ /security/ { for (i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)
  fi
  [[ -n $uri ]] || die "no Debian mirror in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list"
  echo "$uri"
}

start=$SECONDS
if podman image exists "$BASE" && [[ ${REBUILD_BASE:-} != 1 ]]; then
  log "base $BASE cached (REBUILD_BASE=1 to debootstrap it again)"
else
  rootfs=$WORK/rootfs
  # --one-file-system: an interrupted debootstrap can leave /proc or /sys
  # mounted in the rootfs, and rm must not walk into the host's.
  rm -rf --one-file-system "$rootfs"
  mkdir -p "$rootfs"
  log "debootstrap $SUITE minbase into $rootfs"
  nice -n 10 debootstrap --variant=minbase "$SUITE" "$rootfs" "$(mirror)" >"$WORK/debootstrap.log" 2>&1 ||
    { tail -20 "$WORK/debootstrap.log" >&2; die "debootstrap failed; see $WORK/debootstrap.log"; }
  # debootstrap's sources.list names the mirror; the Containerfile's apt
  # runs with this machine's sources mounted instead, so the image names none.
  rm -f "$rootfs/etc/apt/sources.list"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/*
  log "importing the rootfs as $BASE"
  tar -C "$rootfs" --numeric-owner -c . | podman import --change 'CMD ["/bin/bash"]' - "$BASE" >/dev/null
  rm -rf --one-file-system "$rootfs"
fi
log "base ready after $((SECONDS - start)) s"

# Everything the image is made of, as one key: when the image already
# carries it, there is nothing to build (a fresh clone's files would
# otherwise make a new top layer, and a new image id, every time).
commit=$(git -C "$top" rev-parse HEAD)
key=$( {
  echo "$commit"
  podman image inspect --format '{{.Id}}' "$BASE"
  sha256sum "$here/Containerfile" "$here/build.sh"
  (cd / && find opt/faultwin -type f -print0 | sort -z | xargs -0 sha256sum)
  PATH=/usr/local/go/bin:$PATH go version
} | sha256sum | cut -c1-16)
if [[ $(podman image inspect --format '{{index .Labels "faultwin.build-key"}}' "$IMAGE" 2>/dev/null) == "$key" ]]; then
  log "$IMAGE is up to date (commit $commit, build key $key)"
  exit 0
fi

# The build context: /opt/faultwin as make deps left it (CRIU, and the
# tools the drivers' requires: name there), and a clone of HEAD built there.
ctx=$WORK/context
rm -rf "$ctx"
mkdir -p "$ctx/opt"
cp -a /opt/faultwin "$ctx/opt/faultwin"
git clone -q "$top" "$ctx/src"
git -C "$ctx/src" checkout -q --detach "$commit"
log "building bin/faultwin and bin/refsup at $commit"
nice -n 10 make -s -C "$ctx/src" build >/dev/null

# apt inside the build reads this machine's own sources and settings
# (the mirror is a dated snapshot: Check-Valid-Until off there too).
vols=(-v /etc/apt/sources.list.d:/etc/apt/sources.list.d:ro -v /etc/apt/apt.conf.d:/etc/apt/apt.conf.d:ro)
[[ -f /etc/apt/sources.list ]] && vols+=(-v /etc/apt/sources.list:/etc/apt/sources.list:ro)
old=$(podman image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
log "podman build $IMAGE"
nice -n 10 podman build --network=host "${vols[@]}" --build-arg BASE="$BASE" \
  --label org.opencontainers.image.revision="$commit" --label faultwin.build-key="$key" \
  -f "$here/Containerfile" -t "$IMAGE" "$ctx"
rm -rf "$ctx"
# The image this one replaces keeps its own layers (a commit's clone) until
# removed; removal fails, harmlessly, while a container still uses it.
new=$(podman image inspect --format '{{.Id}}' "$IMAGE")
if [[ -n $old && $old != "$new" ]]; then
  podman rmi "$old" >/dev/null 2>&1 || true
fi
log "$IMAGE at $commit, $(podman image inspect --format '{{.Size}}' "$IMAGE") bytes, built in $((SECONDS - start)) s"
