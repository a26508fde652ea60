#!/usr/bin/env bash
# Builds the newest releases of the components that are Go modules, at the
# versions pinned here, from the Go module proxy into $PREFIX/bin, beside
# Debian's (which stay where they are): the variants under
# drivers/described/variants run on them. runc and podman are built with
# seccomp (podman applies its default profile; Debian's libseccomp-dev),
# containerd without btrfs.
set -euo pipefail
PREFIX=${PREFIX:-/opt/faultwin/latest}
RUNC=v1.5.3
CONTAINERD=v2.4.2
PODMAN=v5.8.2
export GOBIN=$PREFIX/bin
mkdir -p "$GOBIN"
have() { [[ -x $GOBIN/$1 ]] && "$GOBIN/$1" --version 2>/dev/null | grep -q "$2"; }
dpkg -s libseccomp-dev pkg-config >/dev/null 2>&1 ||
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libseccomp-dev pkg-config
if ! have runc "${RUNC#v}" || ! "$GOBIN/runc" --version | grep -q '^libseccomp'; then
  echo "install-latest: runc $RUNC (with seccomp)"
  CGO_ENABLED=1 go install -tags seccomp "github.com/opencontainers/runc@$RUNC"
fi
if ! have containerd "${CONTAINERD#v}"; then
  echo "install-latest: containerd $CONTAINERD (containerd, ctr, containerd-shim-runc-v2)"
  go install -tags no_btrfs "github.com/containerd/containerd/v2/cmd/containerd@$CONTAINERD" \
    "github.com/containerd/containerd/v2/cmd/ctr@$CONTAINERD" \
    "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$CONTAINERD"
fi
# podman itself is not served by the module proxy (its libraries are):
# it is built from a checkout of its public source at $PODMAN, with its
# vendored modules, when PODMAN_SRC names one. Debian's libsqlite3-dev
# stands in for the vendored SQLite amalgamation (tag libsqlite3); no
# gpgme, btrfs or devicemapper.
if [[ -n ${PODMAN_SRC:-} ]] && { ! have podman "${PODMAN#v}" || [[ ${PODMAN_REBUILD:-} == 1 ]]; }; then
  echo "install-latest: podman $PODMAN from $PODMAN_SRC"
  dpkg -s libsqlite3-dev >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libsqlite3-dev
  (cd "$PODMAN_SRC" && CGO_ENABLED=1 go build -mod=vendor \
    -tags "seccomp libsqlite3 exclude_graphdriver_btrfs exclude_graphdriver_devicemapper containers_image_openpgp" \
    -o "$GOBIN/podman" ./cmd/podman)
elif [[ -z ${PODMAN_SRC:-} ]]; then
  echo "install-latest: podman $PODMAN not built: set PODMAN_SRC to a checkout of its source at that tag"
fi
for b in runc containerd ctr podman; do [[ -x $GOBIN/$b ]] && "$GOBIN/$b" --version | head -1; done
true
