#!/usr/bin/env bash
# neighbours.sh up|check|down|run -- CMD...: a user's own containers and
# processes beside the suite, as on a developer's workstation or a CI
# runner: a podman container on podman's default network (podman0, a
# named netns, netavark's chains), a Docker container on docker0 (with
# Docker's iptables chains), a task of a containerd of the user's (its
# shim socket under /run/containerd/s), a plain veth pair and a bridge
# with a port of the user's, and a process that starts about 100 short
# processes a second. None of it is faultwin's: the suite must run beside
# it without a refusal, a claim or a deletion.
#
# up records each object's identity (scripts/neighbours: links by ifindex,
# netns by inode, nft chains by table and handle); check compares them
# with now, execs into each container, and fails on any difference; run
# does up, CMD, `faultwin sweep --reclaim-names`, check and `faultwin
# hostcheck`, and down whatever happens. Everything lives under $DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${NEIGHBOURS_DIR:-/run/faultwin-neighbours}
FAULTWIN=${FAULTWIN:-bin/faultwin}
STATE_ROOT=${STATE_ROOT:-/var/lib/faultwin/state}
IMAGE=localhost/fwneighbour-busybox:1
export PATH=/usr/local/go/bin:$PATH

say() { echo "neighbours: $*"; }
# detached starts a long-lived neighbour in its own session with only
# stdin, stdout and stderr: a descriptor it inherited (a lock held by
# whoever runs this script) would otherwise stay held as long as it lives.
detached() {
  (
    for fd in /proc/self/fd/*; do
      n=${fd##*/}
      ((n > 2)) && eval "exec $n>&-" 2>/dev/null
    done
    exec setsid "$@"
  ) &
}
pod() { podman --root "$DIR/podman/storage" --runroot "$DIR/podman/run" --tmpdir "$DIR/podman/tmp" \
  --cgroup-manager cgroupfs --events-backend file "$@"; }
dock() { docker --host "unix://$DIR/docker/d.sock" "$@"; }
ctrc() { ctr --address "$DIR/containerd/c.sock" --namespace user "$@"; }

rootfs() {
  mkdir -p "$DIR/rootfs/bin" "$DIR/rootfs/tmp"
  cp "$(command -v busybox || echo /bin/busybox)" "$DIR/rootfs/bin/busybox"
  for a in sh sleep true cat; do ln -sf busybox "$DIR/rootfs/bin/$a"; done
  tar -C "$DIR/rootfs" -cf "$DIR/rootfs.tar" .
}

up() {
  if [[ -e $DIR ]]; then
    say "$DIR exists: an earlier neighbours run did not end (killed?); taking its neighbours down first"
    down
  fi
  mkdir -p "$DIR"
  go build -o "$DIR/nb" ./scripts/neighbours
  "$DIR/nb" before "$DIR/before.json"
  rootfs

  say "a podman container on podman's default network"
  mkdir -p "$DIR/podman/tmp"
  pod import "$DIR/rootfs.tar" "$IMAGE" >/dev/null
  pod run -d --name fwneighbour --ulimit nofile=20000:20000 --ulimit nproc=32768:32768 "$IMAGE" /bin/sleep 7200 >/dev/null

  say "a Docker container on docker0 (Docker's default network, iptables on)"
  mkdir -p "$DIR/docker"
  echo '{}' >"$DIR/docker/daemon.json"
  detached dockerd --config-file "$DIR/docker/daemon.json" --data-root "$DIR/docker/data" --exec-root "$DIR/docker/exec" \
    --host "unix://$DIR/docker/d.sock" --pidfile "$DIR/docker/d.pid" >"$DIR/docker/dockerd.log" 2>&1 </dev/null
  for _ in $(seq 150); do dock version >/dev/null 2>&1 && break; sleep 0.1; done
  dock version >/dev/null
  dock import "$DIR/rootfs.tar" fwneighbour-busybox:1 >/dev/null
  dock run -d --name fwneighbour --ulimit nofile=20000:20000 fwneighbour-busybox:1 /bin/sleep 7200 >/dev/null

  say "a task of the user's own containerd"
  mkdir -p "$DIR/containerd"
  cat >"$DIR/containerd/config.toml" <<EOF
version = 2
root = "$DIR/containerd/root"
state = "$DIR/containerd/state"
[grpc]
  address = "$DIR/containerd/c.sock"
[plugins."io.containerd.grpc.v1.cri"]
  disable_apparmor = true
EOF
  detached containerd --config "$DIR/containerd/config.toml" >"$DIR/containerd/containerd.log" 2>&1 </dev/null
  echo $! >"$DIR/containerd/pid"
  for _ in $(seq 100); do ctrc version >/dev/null 2>&1 && break; sleep 0.1; done
  ctrc run --detach --rootfs "$DIR/rootfs" fwneighbour /bin/sleep 7200 >/dev/null 2>&1 </dev/null

  say "a veth pair and a bridge with a port, the user's"
  ip link add fwnbr0 type bridge
  ip link add fwnveth1 type veth peer name fwnveth2
  ip link add fwnport1 type veth peer name fwnport2
  ip link set fwnport1 master fwnbr0

  say "a process starting about 100 short processes a second"
  detached bash -c 'echo $$ >'"$DIR"'/forker.pid; while [[ -d '"$DIR"' ]]; do /bin/true; sleep 0.01; done' >/dev/null 2>&1 </dev/null
  for _ in $(seq 50); do [[ -s $DIR/forker.pid ]] && break; sleep 0.02; done

  "$DIR/nb" record "$DIR/before.json" "$DIR/identities.json"
  check
}

# check: the neighbours are all there, unchanged, and answer.
check() {
  local bad=0
  "$DIR/nb" compare "$DIR/identities.json" || bad=1
  pod exec fwneighbour /bin/true || { echo "neighbours: podman exec into the user's container failed" >&2; bad=1; }
  dock exec fwneighbour /bin/true || { echo "neighbours: docker exec into the user's container failed" >&2; bad=1; }
  ctrc task exec --exec-id check-$$ fwneighbour /bin/true || { echo "neighbours: ctr task exec into the user's task failed" >&2; bad=1; }
  [[ -d /proc/$(cat "$DIR/forker.pid") ]] || { echo "neighbours: the forking neighbour is gone" >&2; bad=1; }
  ((bad == 0)) && say "all there, unchanged, answering"
  return $bad
}

down() {
  [[ -d $DIR ]] || return 0
  say "down"
  [[ -f $DIR/forker.pid ]] && kill "$(cat "$DIR/forker.pid")" 2>/dev/null || true
  ctrc task kill -s KILL fwneighbour >/dev/null 2>&1 || true
  sleep 0.2
  ctrc task delete fwneighbour >/dev/null 2>&1 || true
  ctrc container delete fwneighbour >/dev/null 2>&1 || true
  [[ -f $DIR/containerd/pid ]] && kill "$(cat "$DIR/containerd/pid")" 2>/dev/null || true
  dock rm -f fwneighbour >/dev/null 2>&1 || true
  [[ -f $DIR/docker/d.pid ]] && kill "$(cat "$DIR/docker/d.pid")" 2>/dev/null || true
  pod rm -f -t 0 fwneighbour >/dev/null 2>&1 || true
  for l in fwnbr0 fwnveth1 fwnport1; do ip link del "$l" 2>/dev/null || true; done
  for _ in $(seq 50); do
    [[ -f $DIR/docker/d.pid ]] && kill -0 "$(cat "$DIR/docker/d.pid" 2>/dev/null)" 2>/dev/null && { sleep 0.1; continue; }
    [[ -f $DIR/containerd/pid ]] && kill -0 "$(cat "$DIR/containerd/pid" 2>/dev/null)" 2>/dev/null && { sleep 0.1; continue; }
    break
  done
  # what the user's engines leave when they stop: their bridges, chains and mounts
  ip link del docker0 2>/dev/null || true
  ip link del podman0 2>/dev/null || true
  [[ -x $DIR/nb ]] && { "$DIR/nb" clean "$DIR/before.json" || true; }
  { grep -o " $DIR[^ ]*" /proc/self/mounts || true; } | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  rm -rf "$DIR"
}

case ${1:-} in
up) up ;;
check) check ;;
down) down ;;
run)
  shift
  [[ ${1:-} == -- ]] && shift
  trap down EXIT
  up
  rc=0
  "$@" || rc=$?
  say "the sweep as hostcheck advises, then the neighbours again"
  "$FAULTWIN" sweep --reclaim-names --state-root "$STATE_ROOT" || rc=${rc:-1}
  check || rc=1
  "$FAULTWIN" hostcheck --state-root "$STATE_ROOT" || rc=1
  exit $rc
  ;;
*)
  echo "usage: $0 up|check|down|run -- CMD..." >&2
  exit 64
  ;;
esac
