#!/usr/bin/env bash
# Builds what make cluster-test runs, once per version, into $CACHE:
#   bin/     kube-apiserver, kube-controller-manager, kube-scheduler, kubelet,
#            kubectl (the nested module k8s/), etcd (etcd/), containerd, ctr
#            and containerd-shim-runc-v2 (containerd/), pause (Kubernetes'
#            pause.c, static). Each nested module has its own go.mod and
#            go.sum, so the main module's go list, lint and tests never see it.
#   VERSIONS the versions bin/ was built at; a bin/ whose VERSIONS differs
#            from what this script would write is built again.
# Only the Go module proxy and this machine's compiler are used: no
# distribution's Kubernetes, no registry. `images` builds the two images
# (the project's through deploy/image/build.sh, and the pause image) in a
# podman storage of the cluster's own under $CACHE/podman, never the host's,
# and saves each as a docker-archive under $CACHE/images.
#
# Usage: build.sh bin | images
set -euo pipefail
export PATH=/usr/local/go/bin:$PATH GOFLAGS=-mod=mod
here=$(cd "$(dirname "$0")" && pwd)
top=$(git -C "$here" rev-parse --show-toplevel)
CACHE=${CLUSTER_CACHE:-/var/cache/faultwin/cluster}
K8S=v1.34.2
ETCD=v3.6.4 # the version k8s.io/kubernetes v1.34.2 pins
# >= 1.7: a per-runtime snapshotter (runtime-class.yaml); 1.6 ignores it.
CONTAINERD=v1.7.30
log() { echo "cluster-build: $*"; }

versions() {
  echo "kubernetes $K8S"
  echo "etcd $ETCD"
  echo "containerd $CONTAINERD"
  echo "pause $K8S"
  # The wrappers pin every other module: a changed go.sum is a new build.
  cat "$here"/{k8s,etcd,containerd}/go.{mod,sum} "$here/etcd/main.go" | sha256sum | sed 's/ .*/ modules/'
  go version
}

build_bin() {
  if [[ $(cat "$CACHE/VERSIONS" 2>/dev/null) == "$(versions)" ]]; then
    log "bin: cached ($CACHE/VERSIONS: $(head -3 "$CACHE/VERSIONS" | paste -sd, -))"
    return
  fi
  local new=$CACHE/bin.new
  rm -rf "$new"
  mkdir -p "$new"
  local ver="-X k8s.io/component-base/version.gitVersion=$K8S -X k8s.io/component-base/version.gitMajor=1"
  ver+=" -X k8s.io/component-base/version.gitMinor=$(cut -d. -f2 <<<"$K8S") -X k8s.io/component-base/version.gitTreeState=clean"
  log "bin: kubernetes $K8S"
  (cd "$here/k8s" && nice -n 10 go build -trimpath -ldflags "-s -w $ver" -o "$new/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kubectl)
  log "bin: etcd $ETCD"
  (cd "$here/etcd" && nice -n 10 go build -trimpath -ldflags "-s -w" -o "$new/etcd" .)
  log "bin: containerd $CONTAINERD"
  (cd "$here/containerd" && nice -n 10 go build -trimpath -tags "no_btrfs no_devmapper no_zfs no_aufs" \
    -ldflags "-s -w -X github.com/containerd/containerd/version.Version=$CONTAINERD" -o "$new/" \
    github.com/containerd/containerd/cmd/containerd github.com/containerd/containerd/cmd/ctr \
    github.com/containerd/containerd/cmd/containerd-shim-runc-v2)
  log "bin: pause (Kubernetes $K8S build/pause/linux/pause.c, static)"
  local src
  src=$(cd "$here/k8s" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)/build/pause/linux/pause.c
  gcc -Os -static -Wall -Werror -DVERSION="$K8S" -o "$new/pause" "$src"
  strip "$new/pause"
  rm -rf "$CACHE/bin"
  mv "$new" "$CACHE/bin"
  versions >"$CACHE/VERSIONS"
  log "bin: $(du -sh "$CACHE/bin" | cut -f1) in $CACHE/bin"
}

# podman with its storage, run root and temporary files under $CACHE/podman.
podman_env() {
  local p=$CACHE/podman
  mkdir -p "$p/root" "$p/run" "$p/tmp"
  # vfs: layers are plain directories, so nothing is left mounted
  # between builds.
  printf '[storage]\ndriver = "vfs"\ngraphroot = "%s"\nrunroot = "%s"\n' "$p/root" "$p/run" >"$p/storage.conf"
  printf '[engine]\ntmp_dir = "%s"\nevents_logger = "none"\ncgroup_manager = "cgroupfs"\n' "$p/tmp" >"$p/containers.conf"
  export CONTAINERS_STORAGE_CONF=$p/storage.conf CONTAINERS_CONF=$p/containers.conf TMPDIR=$p/tmp
}

# save IMAGE NAME: a docker-archive of IMAGE at $CACHE/images/NAME.tar,
# written again only when the image's id changed.
save() {
  local id
  id=$(podman image inspect --format '{{.Id}}' "$1")
  if [[ -f $CACHE/images/$2.tar && $(cat "$CACHE/images/$2.id" 2>/dev/null) == "$id" ]]; then
    log "images: $1 saved already ($2.tar)"
    return
  fi
  rm -f "$CACHE/images/$2.tar"
  podman save -q --format docker-archive -o "$CACHE/images/$2.tar" "$1"
  echo "$id" >"$CACHE/images/$2.id"
  log "images: $1 saved to $CACHE/images/$2.tar"
}

build_images() {
  podman_env
  mkdir -p "$CACHE/images"
  # deploy/image/build.sh as shipped: the base and the build key are kept
  # in this storage, so a warm call builds nothing.
  WORK=$CACHE/podman/work "$top/deploy/image/build.sh"
  save localhost/faultwin:nightly faultwin-nightly
  local pause=localhost/faultwin-pause:$K8S
  if ! podman image exists "$pause"; then
    local ctx=$CACHE/podman/pause
    rm -rf "$ctx"
    mkdir -p "$ctx"
    cp "$CACHE/bin/pause" "$ctx/pause"
    printf 'FROM scratch\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause"]\n' >"$ctx/Containerfile"
    podman build -q --network=none -t "$pause" "$ctx" >/dev/null
    rm -rf "$ctx"
  fi
  save "$pause" pause
}

case ${1:-} in
bin) build_bin ;;
images) build_images ;;
*)
  echo "usage: $0 bin | images" >&2
  exit 64
  ;;
esac
