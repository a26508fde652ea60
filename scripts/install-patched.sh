#!/usr/bin/env bash
# Builds a release and the same release with a patch of docs/findings/patches
# applied, the same way, each alone in a directory of its own, so that a
# finding's windows run A/B on the two with nothing else differing
# (drivers/described/patched; docs/findings/runc-restore-delete-rootfs.md).
# runc: v1.5.3's source from the Go module proxy (go mod download), built
# with seccomp as scripts/install-latest.sh builds the release, into
# $PREFIX/runc-v1.5.3/bin/runc and, with the patch,
# $PREFIX/runc-v1.5.3-patched/bin/runc ("runc version 1.5.3+<patch>").
# containerd: build_containerd below (docs/findings/containerd-checkpoint-frozen-task.md).
# podman: v5.8.2 from a checkout of its public source at that tag named by
# PODMAN_SRC (its vendored modules), built as scripts/install-latest.sh
# builds it, into $PREFIX/podman-v5.8.2/bin/podman and, with
# podman-restore-save-first.patch, $PREFIX/podman-v5.8.2-patched/bin/podman
# ("podman version 5.8.2+<patch>"); without PODMAN_SRC the pair is not built.
set -euo pipefail
PREFIX=${PREFIX:-/opt/faultwin/ab}
RUNC=v1.5.3
patch=$(cd "$(dirname "$0")/.." && pwd)/docs/findings/patches/runc-delete-through-mount.patch
name=$(basename "$patch" .patch)
dpkg -s libseccomp-dev pkg-config >/dev/null 2>&1 ||
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libseccomp-dev pkg-config
src=$(go mod download -json "github.com/opencontainers/runc@$RUNC" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[[ -d $src ]] || { echo "install-patched: no source for runc $RUNC"; exit 1; }
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT

# build DIR SUFFIX [PATCH]: runc $RUNC into DIR/bin/runc, its version ending in SUFFIX
build() {
  local dir=$1 suffix=$2 p=${3:-} bin=$1/bin/runc
  if [[ -x $bin ]] && [[ $("$bin" --version | head -1) == "runc version ${RUNC#v}$suffix" ]] &&
    { [[ -z $p ]] || [[ $bin -nt $p ]]; }; then
    echo "install-patched: $("$bin" --version | head -1) already at $bin"
    return
  fi
  rm -rf "$work/runc" && cp -r "$src" "$work/runc" && chmod -R u+w "$work/runc"
  [[ -z $p ]] || (cd "$work/runc" && patch -p1 --no-backup-if-mismatch < "$p")
  mkdir -p "$dir/bin"
  (cd "$work/runc" && CGO_ENABLED=1 go build -mod=mod -tags seccomp -trimpath \
    ${suffix:+-ldflags "-X main.extraVersion=$suffix"} -o "$bin" .)
  echo "install-patched: $("$bin" --version | head -1) at $bin"
}
build "$PREFIX/runc-$RUNC" ""
build "$PREFIX/runc-$RUNC-patched" "+$name" "$patch"

# containerd: v2.4.2's source from the Go module proxy, its containerd, ctr
# and containerd-shim-runc-v2 built with the tag no_btrfs as
# scripts/install-latest.sh builds the release, into
# $PREFIX/containerd-v2.4.2/bin ("2.4.2+unknown", the release's own string)
# and, with ctr-checkpoint-pause-record.patch,
# $PREFIX/containerd-v2.4.2-patched/bin ("2.4.2+<patch>"): the A/B of
# docs/findings/containerd-checkpoint-frozen-task.md.
build_containerd() {
  local tag=v2.4.2 cpatch name src dir suffix p arm
  cpatch=$(cd "$(dirname "$0")/.." && pwd)/docs/findings/patches/ctr-checkpoint-pause-record.patch
  name=$(basename "$cpatch" .patch)
  src=$(go mod download -json "github.com/containerd/containerd/v2@$tag" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -d $src ]] || { echo "install-patched: no source for containerd $tag"; exit 1; }
  for arm in release patched; do
    dir=$PREFIX/containerd-$tag suffix=+unknown p=
    [[ $arm == release ]] || dir=$dir-patched suffix=+$name p=$cpatch
    if [[ -x $dir/bin/ctr && -x $dir/bin/containerd && -x $dir/bin/containerd-shim-runc-v2 ]] &&
      [[ $("$dir/bin/ctr" --version) == "ctr github.com/containerd/containerd/v2 ${tag#v}$suffix" ]] &&
      { [[ -z $p ]] || [[ $dir/bin/ctr -nt $p ]]; }; then
      echo "install-patched: $("$dir/bin/ctr" --version) already in $dir/bin"
      continue
    fi
    rm -rf "$work/containerd" && cp -r "$src" "$work/containerd" && chmod -R u+w "$work/containerd"
    [[ -z $p ]] || (cd "$work/containerd" && patch -p1 --no-backup-if-mismatch < "$p")
    mkdir -p "$dir/bin"
    (cd "$work/containerd" && go build -mod=mod -tags no_btrfs -trimpath \
      -ldflags "-X github.com/containerd/containerd/v2/version.Version=${tag#v}$suffix" -o "$dir/bin/" \
      ./cmd/containerd ./cmd/ctr ./cmd/containerd-shim-runc-v2)
    echo "install-patched: $("$dir/bin/containerd" --version) in $dir/bin"
  done
}
build_containerd
# podman_pair: podman $PODMAN (PODMAN_SRC, a checkout at that tag) as
# released and with the patch, each copy built alike in one place
# (-trimpath, install-latest.sh's tags), the patched one's version marked
# in version/rawversion.
podman_pair() {
  local PODMAN=v5.8.2 p dir suffix bin
  p=$(cd "$(dirname "$0")/.." && pwd)/docs/findings/patches/podman-restore-save-first.patch
  if [[ -z ${PODMAN_SRC:-} ]]; then
    echo "install-patched: podman $PODMAN not built: set PODMAN_SRC to a checkout of its source at that tag"
    return
  fi
  [[ -f $PODMAN_SRC/version/rawversion/version.go ]] &&
    grep -q "RawVersion = \"${PODMAN#v}\"" "$PODMAN_SRC/version/rawversion/version.go" ||
    { echo "install-patched: $PODMAN_SRC is not podman $PODMAN (version/rawversion/version.go)"; exit 1; }
  dpkg -s libsqlite3-dev >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libsqlite3-dev
  for suffix in "" "+$(basename "$p" .patch)"; do
    dir=$PREFIX/podman-$PODMAN${suffix:+-patched} bin=$PREFIX/podman-$PODMAN${suffix:+-patched}/bin/podman
    if [[ -x $bin ]] && [[ $("$bin" --version) == "podman version ${PODMAN#v}$suffix" ]] &&
      { [[ -z $suffix ]] || [[ $bin -nt $p ]]; }; then
      echo "install-patched: $("$bin" --version) already at $bin"
      continue
    fi
    rm -rf "$work/podman" && cp -r "$PODMAN_SRC" "$work/podman" && rm -rf "$work/podman/.git"
    # a source snapshot may lack the vendored SQLite amalgamation (large);
    # with the libsqlite3 tag it compiles to nothing, so an empty one does
    local amalgam=$work/podman/vendor/github.com/mattn/go-sqlite3/sqlite3-binding.c
    [[ -f $amalgam ]] || printf '#ifndef USE_LIBSQLITE3\n#error "built with -tags libsqlite3 only"\n#endif\n' > "$amalgam"
    if [[ -n $suffix ]]; then
      (cd "$work/podman" && patch -p1 --no-backup-if-mismatch < "$p")
      sed -i "s/^const RawVersion = \"${PODMAN#v}\"/const RawVersion = \"${PODMAN#v}$suffix\"/" "$work/podman/version/rawversion/version.go"
    fi
    mkdir -p "$dir/bin"
    (cd "$work/podman" && CGO_ENABLED=1 go build -mod=vendor -trimpath \
      -tags "seccomp libsqlite3 exclude_graphdriver_btrfs exclude_graphdriver_devicemapper containers_image_openpgp" \
      -o "$bin" ./cmd/podman)
    echo "install-patched: $("$bin" --version) at $bin"
  done
}
podman_pair
