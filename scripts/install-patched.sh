#!/usr/bin/env bash
# Builds a release and the same release with a patch of docs/findings/patches
# applied, the same way, each alone in a directory of its own, so that a
# finding's windows run A/B on the two with nothing else differing
# (drivers/described/patched; docs/findings/runc-restore-delete-rootfs.md).
# runc: v1.5.3's source from the Go module proxy (go mod download), built
# with seccomp as scripts/install-latest.sh builds the release, into
# $PREFIX/runc-v1.5.3/bin/runc and, with the patch,
# $PREFIX/runc-v1.5.3-patched/bin/runc ("runc version 1.5.3+<patch>").
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
