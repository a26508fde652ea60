#!/usr/bin/env bash
# hoststate.sh: what a one-node cluster could leave on this host, one
# "kind<TAB>item" line each, sorted, for make cluster-test to compare before
# and after (scripts/cluster/test.sh). Processes and network namespaces come
# and go with the rest of the machine, so only their new members count
# (compare); everything else must be equal both ways.
#   hoststate.sh snapshot           > FILE
#   hoststate.sh compare BEFORE AFTER   exit 1, naming each difference
set -euo pipefail

# The sysctls kubelet sets at start (vm.overcommit_memory, kernel.panic,
# ...: its container manager's kernel tunables) and the forwarding a CNI
# gateway would turn on.
SYSCTLS="vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops
kernel/keys/root_maxkeys kernel/keys/root_maxbytes net/ipv4/ip_forward net/ipv6/conf/all/forwarding"
# Where a cluster's components write outside their own directories when
# not told otherwise (CNI results, kubelet's container log links, shim
# sockets, /var/lib/kubelet, /etc/kubernetes, /opt/containerd, ...).
FILE_ROOTS="/etc /run /var/run /var/lib /var/log /opt /root/.kube"
# What the cluster runs, by command name (pause is the sandbox).
PROCS='^(etcd|kube-apiserver|kube-controller|kube-scheduler|kubelet|kubectl|containerd|containerd-shim|containerd-shim-runc-v2|runc|pause|faultwin|refsup|criu)$'

snapshot() {
  local p comm ns
  for p in /proc/[0-9]*; do
    comm=$(cat "$p/comm" 2>/dev/null) || continue
    if [[ $comm =~ $PROCS ]]; then
      printf 'process\t%s %s %s\n' "${p#/proc/}" "$comm" "$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | cut -c1-160 || true)"
    fi
    ns=$(readlink "$p/ns/net" 2>/dev/null) && printf 'netns\t%s\n' "$ns"
  done
  awk '{ for (i = 7; $i != "-"; i++); print "mount\t" $5 " " $(i+1) " " $(i+2) }' /proc/self/mountinfo
  # The top cgroup of each hierarchy, where a cgroup made outside kubelet's
  # root would be, and everything under that root; deeper cgroups are
  # other software's, which make and remove them as their processes come
  # and go.
  { find /sys/fs/cgroup -mindepth 2 -maxdepth 2 -type d 2>/dev/null
    find /sys/fs/cgroup/*/faultwin-cluster -type d 2>/dev/null || true; } | sed 's/^/cgroup\t/'
  nft list tables 2>/dev/null | sed 's/^/nft\t/'
  local save
  for save in iptables-save ip6tables-save; do
    command -v "$save" >/dev/null || continue
    "$save" 2>/dev/null | awk -v f="$save" '/^\*/ { t = substr($1, 2) } /^:/ { print "iptables\t" f " " t " " substr($1, 2) }'
  done
  ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print "link\t" $2 }'
  local s
  for s in $SYSCTLS; do
    [[ ! -r /proc/sys/$s ]] || printf 'sysctl\t%s=%s\n' "$s" "$(tr '\t' ' ' </proc/sys/"$s")"
  done
  # -xdev: /run and the rest are single file systems here; what is mounted
  # below them is the mounts' business above.
  # shellcheck disable=SC2086
  { find $FILE_ROOTS -xdev -maxdepth 3 2>/dev/null || true; } | sed 's/^/file\t/'
  true
}

# Package installs (dpkg's and apt's own records) are the machine's
# administration, not anything a cluster does.
ignored() { grep -vP '^file\t/var/lib/(dpkg|apt)/' "$1" | sort -u; }

compare() {
  local before=$1 after=$2 bad=0 line
  # Present after, not before: left by the run (processes and network
  # namespaces included).
  while IFS= read -r line; do
    echo "host: left: $line"
    bad=1
  done < <(comm -13 <(ignored "$before") <(ignored "$after"))
  # Present before, gone after: taken from the host (processes and network
  # namespaces end on their own; they are not the run's to keep).
  while IFS= read -r line; do
    [[ $line == process$'\t'* || $line == netns$'\t'* ]] && continue
    # refsup's parent cgroup, which a soak pod's windows remove when empty
    # as they do on a bare host (hostcheck judges it, not this).
    [[ $line =~ ^cgroup$'\t'/sys/fs/cgroup/[^/]+/faultwin$ ]] && continue
    echo "host: gone: $line"
    bad=1
  done < <(comm -23 <(ignored "$before") <(ignored "$after"))
  return $bad
}

case ${1:-} in
snapshot) snapshot | sort -u ;;
compare) compare "$2" "$3" ;;
*)
  echo "usage: $0 snapshot | compare BEFORE AFTER" >&2
  exit 64
  ;;
esac
