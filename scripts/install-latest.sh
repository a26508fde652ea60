#!/usr/bin/env bash
# Builds the newest releases of the components that are Go modules, at the
# versions pinned here, from the Go module proxy into $PREFIX/bin, beside
# Debian's (which stay where they are): the variants under
# drivers/described/variants run on them. runc is built without its
# seccomp tag (no libseccomp headers needed; the windows set no seccomp
# profile), containerd without btrfs.
set -euo pipefail
PREFIX=${PREFIX:-/opt/faultwin/latest}
RUNC=v1.5.3
CONTAINERD=v2.4.2
export GOBIN=$PREFIX/bin
mkdir -p "$GOBIN"
have() { [[ -x $GOBIN/$1 ]] && "$GOBIN/$1" --version 2>/dev/null | grep -q "$2"; }
if ! have runc "${RUNC#v}"; then
  echo "install-latest: runc $RUNC"
  go install "github.com/opencontainers/runc@$RUNC"
fi
if ! have containerd "${CONTAINERD#v}"; then
  echo "install-latest: containerd $CONTAINERD (containerd, ctr, containerd-shim-runc-v2)"
  go install -tags no_btrfs "github.com/containerd/containerd/v2/cmd/containerd@$CONTAINERD" \
    "github.com/containerd/containerd/v2/cmd/ctr@$CONTAINERD" \
    "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$CONTAINERD"
fi
for b in runc containerd ctr; do "$GOBIN/$b" --version | head -1; done
