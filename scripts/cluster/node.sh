# node.sh: a one-node Kubernetes of make cluster-test's own, sourced by
# scripts/cluster/test.sh: etcd, the control plane, containerd and kubelet,
# each with its state under $DIR, listening on loopback only. up starts
# them and waits for the node to be Ready; down stops them and removes what
# they made outside $DIR (the bridge, kubelet's chains and sysctls, cgroups,
# CNI results, container log links, shim sockets), whatever state up left.
# Needs DIR, CACHE (bin/ from build.sh), BEFORE (hoststate.sh's snapshot).

B=$CACHE/bin
SOCK=$DIR/containerd/containerd.sock
KUBECONFIG=$DIR/kubeconfig
NODE=faultwin-cluster-node
BRIDGE=fwcluster0
NETWORK=faultwin-cluster
# A range no route here names: the pods need addresses, not a way out
# (no gateway, no masquerade).
SUBNET=10.199.77.0/24
CGROUP=faultwin-cluster
API=127.0.0.1:16443
ETCD=127.0.0.1:12379
ETCD_PEER=127.0.0.1:12380
CRICTL=${CRICTL:-/opt/faultwin/bin/crictl}
RUNC=${RUNC:-$(command -v runc)}
export KUBECONFIG

kubectl() { "$B/kubectl" "$@"; }

# start NAME CMD...: CMD in its own session, its output in $DIR/logs/NAME.log.
start() {
  local name=$1
  shift
  # Not the host lock's descriptor: a daemon left behind would hold it.
  setsid "$@" >"$DIR/logs/$name.log" 2>&1 </dev/null {lock}>&- &
  echo $! >"$DIR/pids/$name"
}

# stop NAME [SECONDS]: TERM, then KILL after SECONDS (20).
stop() {
  local f=$DIR/pids/$1 pid i
  [[ -f $f ]] || return 0
  pid=$(cat "$f")
  kill -TERM "$pid" 2>/dev/null || { rm -f "$f"; return 0; }
  for ((i = 0; i < ${2:-20} * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$f"
}

# wait_for WHAT SECONDS CMD...: CMD until it succeeds.
wait_for() {
  local what=$1 n=$2 i
  shift 2
  for ((i = 0; i < n * 2; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "cluster: $what not up after $n s; the logs are in $DIR/logs" >&2
  return 1
}

config() {
  mkdir -p "$DIR"/{logs,pids,etcd,apiserver,kubelet,pod-logs,runc,pv,cni/conf,cni/ipam,containerd/root,containerd/state,containerd/opt}
  local token
  token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  # One static token of the system:masters group for every component:
  # a throwaway cluster on loopback has no one else to tell apart.
  echo "$token,admin,admin,\"system:masters\"" >"$DIR/tokens.csv"
  openssl genrsa -out "$DIR/sa.key" 2048 2>/dev/null
  cat >"$KUBECONFIG" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: local, cluster: {server: "https://$API", insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: "$token"}}]
contexts: [{name: local, context: {cluster: local, user: admin}}]
current-context: local
EOF
  chmod 600 "$KUBECONFIG" "$DIR/tokens.csv" "$DIR/sa.key"

  # containerd >= 1.7: the faultwin-native runtime's own snapshotter
  # (deploy/kubernetes/runtime-class.yaml). restrict_oom_score_adj: this
  # root lacks CAP_SYS_RESOURCE, so runc cannot give a sandbox an
  # oom_score_adj below containerd's own, and without it no pod starts.
  cat >"$DIR/containerd/config.toml" <<EOF
version = 2
root = "$DIR/containerd/root"
state = "$DIR/containerd/state"
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$DIR/containerd/opt"
[plugins."io.containerd.nri.v1.nri"]
  disable = true
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/faultwin-pause:$K8S"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_cdi = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$DIR/cni/conf"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$RUNC"
        Root = "$DIR/runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.faultwin-native]
      runtime_type = "io.containerd.runc.v2"
      snapshotter = "native"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.faultwin-native.options]
        BinaryName = "$RUNC"
        Root = "$DIR/runc"
EOF
  cat >"$DIR/cni/conf/10-$NETWORK.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "$NETWORK", "plugins": [
  {"type": "bridge", "bridge": "$BRIDGE", "isGateway": false, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$SUBNET"}]], "dataDir": "$DIR/cni/ipam"}}]}
EOF
  # cgroupfs, and failCgroupV1: false for a v1 (hybrid) host, which 1.34
  # refuses otherwise; image GC off (the images are imported, not pulled);
  # no eviction on a busy CI disk; served on loopback, to no one (no
  # anonymous or webhook authentication: the test reads pod logs from
  # podLogsDir).
  cat >"$DIR/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failCgroupV1: false
cgroupRoot: /$CGROUP
containerRuntimeEndpoint: unix://$SOCK
address: 127.0.0.1
port: 11250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 11248
authentication: {anonymous: {enabled: false}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
failSwapOn: false
podLogsDir: $DIR/pod-logs
resolvConf: /etc/resolv.conf
EOF
}

# The cgroup kubelet's cgroupRoot names, in every hierarchy (kubelet
# refuses a root that does not exist); a v1 cpuset needs its parent's
# cpus and mems before a task can join.
cgroups_make() {
  local h
  for h in /sys/fs/cgroup/*/; do
    mkdir -p "$h$CGROUP"
    if [[ -f $h/cpuset.cpus ]]; then
      cat "$h/cpuset.cpus" >"$h$CGROUP/cpuset.cpus"
      cat "$h/cpuset.mems" >"$h$CGROUP/cpuset.mems"
    fi
  done
}

up() {
  config
  cgroups_make
  start etcd "$B/etcd" --name default --data-dir "$DIR/etcd" \
    --listen-client-urls "http://$ETCD" --advertise-client-urls "http://$ETCD" \
    --listen-peer-urls "http://$ETCD_PEER" --initial-advertise-peer-urls "http://$ETCD_PEER" \
    --initial-cluster "default=http://$ETCD_PEER" --listen-metrics-urls "" --log-level warn
  # --allow-privileged: the soak pods are privileged. No endpoint
  # reconciler: the service's endpoint would be loopback, which endpoints
  # refuse, and nothing here uses the service.
  start apiserver "$B/kube-apiserver" --etcd-servers "http://$ETCD" \
    --bind-address 127.0.0.1 --secure-port "${API#*:}" --advertise-address 127.0.0.1 \
    --cert-dir "$DIR/apiserver" --token-auth-file "$DIR/tokens.csv" --authorization-mode RBAC \
    --allow-privileged=true --service-cluster-ip-range 10.199.78.0/24 --endpoint-reconciler-type none \
    --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$DIR/sa.key" \
    --service-account-signing-key-file "$DIR/sa.key" --profiling=false
  start containerd "$B/containerd" --config "$DIR/containerd/config.toml"
  wait_for "the API server" 90 kubectl get --raw /readyz
  # --root-ca-file: kube-root-ca.crt, which every pod's token volume mounts.
  start controller-manager "$B/kube-controller-manager" --kubeconfig "$KUBECONFIG" \
    --bind-address 127.0.0.1 --secure-port 0 --leader-elect=false \
    --service-account-private-key-file "$DIR/sa.key" --root-ca-file "$DIR/apiserver/apiserver.crt" \
    --use-service-account-credentials=false --profiling=false
  start scheduler "$B/kube-scheduler" --kubeconfig "$KUBECONFIG" \
    --bind-address 127.0.0.1 --secure-port 0 --leader-elect=false --profiling=false
  wait_for containerd 30 "$B/ctr" --address "$SOCK" version
  start kubelet "$B/kubelet" --config "$DIR/kubelet/config.yaml" --kubeconfig "$KUBECONFIG" \
    --root-dir "$DIR/kubelet" --cert-dir "$DIR/kubelet/pki" --hostname-override "$NODE"
  wait_for "the node" 120 kubectl wait --for=condition=Ready "node/$NODE" --timeout=1s
  wait_for "the default service account" 60 kubectl get serviceaccount default
}

# The images, from build.sh's archives, into the CRI plugin's namespace
# for the native snapshotter (docs/soak.md, "The image").
images_import() {
  local f
  for f in "$CACHE/images/pause.tar" "$CACHE/images/faultwin-nightly.tar"; do
    "$B/ctr" --address "$SOCK" -n k8s.io images import --snapshotter native "$f" >/dev/null
  done
}

# down: every step runs whatever failed before it.
down() {
  if [[ -f $DIR/pids/apiserver && -f $DIR/pids/kubelet ]]; then
    # The pods through kubelet, which unmounts their volumes.
    timeout 60 "$B/kubectl" delete pods --all --wait=true --timeout=50s >/dev/null 2>&1 || true
  fi
  stop kubelet
  # The control plane's state is thrown away: no graceful drain (the API
  # server's takes most of a minute).
  stop scheduler 2
  stop controller-manager 2
  if [[ -S $SOCK ]]; then
    # What kubelet did not remove: sandboxes (CNI DEL) and containers.
    timeout 60 "$CRICTL" -r "unix://$SOCK" rmp -fa >/dev/null 2>&1 || true
  fi
  stop containerd
  stop apiserver 2
  stop etcd 2
  local pid
  # Shims outlive containerd; theirs name its socket.
  for pid in $(grep -lsF "$DIR/containerd" /proc/[0-9]*/cmdline | cut -d/ -f3); do
    kill -KILL "$pid" 2>/dev/null || true
  done
  sleep 0.5
  # Mounts under $DIR, deepest first: pod volumes, network namespaces,
  # snapshots.
  local m
  while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done < <(awk -v d="$DIR/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
  ip link del "$BRIDGE" 2>/dev/null || true
  restore_host
  # Anything still in the cgroups kubelet made (a container whose shim
  # was killed), then those cgroups, deepest first.
  local h
  for pid in $(find /sys/fs/cgroup/*/"$CGROUP" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u); do
    kill -KILL "$pid" 2>/dev/null || true
  done
  for h in /sys/fs/cgroup/*/"$CGROUP"; do
    [[ -d $h ]] || continue
    find "$h" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
}

# restore_host undoes what kubelet and CNI change outside $DIR, from the
# snapshot taken before the cluster started ($BEFORE).
restore_host() {
  [[ -f ${BEFORE:-} ]] || return 0
  local kind item
  # kubelet's kernel tunables (vm.overcommit_memory, kernel.panic, ...).
  while IFS=$'\t' read -r kind item; do
    [[ $kind == sysctl ]] || continue
    [[ $(cat "/proc/sys/${item%%=*}") == "${item#*=}" ]] || echo "${item#*=}" >"/proc/sys/${item%%=*}"
  done <"$BEFORE"
  # kubelet's chains (KUBE-FIREWALL, KUBE-KUBELET-CANARY) and the jumps to
  # them in chains that were there before; then the tables that were not
  # (iptables-nft makes a whole table, base chains and all, for a chain).
  local now f t c rule
  now=$("$(dirname "${BASH_SOURCE[0]}")/hoststate.sh" snapshot)
  while read -r f t c; do
    [[ $c == KUBE-* ]] || continue
    f=${f%-save}
    while read -r rule; do
      # shellcheck disable=SC2086
      $f -t "$t" ${rule/#-A/-D} 2>/dev/null || true
    done < <($f -t "$t" -S 2>/dev/null | grep -E -- "-j $c( |\$)")
    $f -t "$t" -F "$c" 2>/dev/null || true
    $f -t "$t" -X "$c" 2>/dev/null || true
  done < <(comm -13 <(grep -P '^iptables\t' "$BEFORE" | cut -f2 | sort) <(grep -P '^iptables\t' <<<"$now" | cut -f2 | sort))
  while read -r _ fam t; do
    nft delete table "$fam" "$t" 2>/dev/null || true
  done < <(comm -13 <(grep -P '^nft\t' "$BEFORE" | cut -f2 | sort) <(grep -P '^nft\t' <<<"$now" | cut -f2 | sort))
  # Files new since $BEFORE where a cluster writes outside its own
  # directories: CNI's results cache, kubelet's /var/log/containers links
  # and its device plugin socket (/var/lib/kubelet/device-plugins, whatever
  # --root-dir says), containerd's shim sockets (/run/containerd/s);
  # deepest first.
  while read -r f; do
    case $f in
    /var/lib/cni/* | /var/lib/cni | /var/log/containers/* | /var/log/containers | /run/containerd/* | /run/containerd | \
      /var/log/pods | /var/log/pods/* | /var/lib/kubelet | /var/lib/kubelet/*)
      if [[ -d $f && ! -L $f ]]; then rm -rf --one-file-system "$f"; else rm -f "$f"; fi
      ;;
    esac
  done < <(comm -13 <(grep -P '^file\t' "$BEFORE" | cut -f2) <(grep -P '^file\t' <<<"$now" | cut -f2) | sort -r)
  # CNI's results of this network in a directory that was there before.
  rm -f /var/lib/cni/results/"$NETWORK"-* 2>/dev/null || true
}
