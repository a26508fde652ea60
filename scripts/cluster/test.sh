#!/usr/bin/env bash
# make cluster-test: the shipped soak and merge Jobs (deploy/kubernetes) on
# a one-node Kubernetes built here from the Go module proxy
# (scripts/cluster/build.sh), then the host shown unchanged.
#
#   build   the binaries, once per version (no host lock: CPU only)
#   lock    /tmp/faultwin-host.lock, held until the cluster is down
#   images  the project's image and the pause image (podman storage of
#           the cluster's own), saved once per image
#   up      etcd, the control plane, containerd and kubelet under $DIR
#   import  both images into containerd for the native snapshotter
#   soak    the Indexed Job, 2 shards over SOAK_LABELS (W1), SOAK_PASSES (2)
#           passes, through the Job's own env (LABEL_FILTER, PASSES): a
#           shard needs at least one (window, pass) pair of its own
#   merge   the merge Job over the soak Job's rows
#   check   both shards Complete with rows, the merge Complete with coverage
#           and provenance ok, the merged rows replayed without root
#   beside  refsup's W1 and W11 run on the host beside the live cluster: both PASS
#   down    (EXIT trap) the results copied to $OUT, the cluster stopped,
#           the host compared with its snapshot from before up, hostcheck
#
# Each step prints its seconds. Environment: CLUSTER_CACHE (built binaries
# and images, /var/cache/faultwin/cluster), CLUSTER_OUT (results and logs,
# out/cluster), SOAK_LABELS (W1), SOAK_PASSES (2), STATE_ROOT.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(git -C "$here" rev-parse --show-toplevel)
CACHE=${CLUSTER_CACHE:-/var/cache/faultwin/cluster}
OUT=${CLUSTER_OUT:-$top/out/cluster}
SOAK_LABELS=${SOAK_LABELS:-W1}
SOAK_PASSES=${SOAK_PASSES:-2}
STATE_ROOT=${STATE_ROOT:-/var/lib/faultwin/state}
K8S=v1.34.2
SHARDS=2
FAULTWIN=$top/bin/faultwin
manifests=$top/deploy/kubernetes

[[ $(id -u) == 0 ]] || { echo "cluster-test: needs root" >&2; exit 1; }
[[ -x $FAULTWIN ]] || { echo "cluster-test: no $FAULTWIN: make build" >&2; exit 1; }
start_all=$SECONDS
t=$SECONDS
step() {
  echo "cluster-test: $1 $((SECONDS - t)) s"
  t=$SECONDS
}

"$here/build.sh" bin
step build

exec {lock}>/tmp/faultwin-host.lock
flock "$lock"
step lock

"$here/build.sh" images
step images

rm -rf "$OUT"
mkdir -p "$OUT"
BEFORE=$OUT/host-before.txt
"$FAULTWIN" hostcheck --state-root "$STATE_ROOT"
"$here/hoststate.sh" snapshot >"$BEFORE"
DIR=$(mktemp -d /var/tmp/faultwin-cluster.XXXXXX)
# shellcheck source=node.sh
source "$here/node.sh"
export HOME=$DIR # kubectl's cache and config, and anything else's

teardown() {
  local rc=$? bad=0
  set +e
  t=$SECONDS
  # The results and logs first: CI keeps $OUT.
  [[ -d $DIR/pv ]] && cp -a "$DIR/pv/." "$OUT/results/" 2>/dev/null
  mkdir -p "$OUT/logs"
  cp -a "$DIR/logs/." "$OUT/logs/" 2>/dev/null
  [[ -d $DIR/pod-logs ]] && cp -a "$DIR/pod-logs" "$OUT/logs/pods" 2>/dev/null
  down
  step down
  "$here/hoststate.sh" snapshot >"$OUT/host-after.txt"
  if "$here/hoststate.sh" compare "$BEFORE" "$OUT/host-after.txt"; then
    echo "cluster-test: host unchanged ($(wc -l <"$BEFORE") processes, mounts, netns, cgroups, nft tables, iptables chains, links, sysctls and files compared)"
  else
    echo "cluster-test: the host differs from before the cluster (above; $OUT/host-before.txt, host-after.txt)"
    bad=1
  fi
  "$FAULTWIN" hostcheck --state-root "$STATE_ROOT" || bad=1
  step compare
  # The host is as it was: the lock is not needed to remove the test's own
  # directory (gigabytes of native snapshots: a copy of the image each).
  flock -u "$lock"
  exec {lock}>&-
  rm -rf --one-file-system "$DIR"
  step rm
  if ((rc == 0 && bad == 0)); then
    echo "cluster-test: ok in $((SECONDS - start_all)) s"
  else
    echo "cluster-test: FAILED (exit $rc, host left unclean: $bad); logs and results in $OUT"
    ((rc == 0)) && rc=1
  fi
  exit $rc
}
trap teardown EXIT
trap 'exit 130' INT TERM

up
step up
images_import
step import

# The PV a bare cluster needs for the RWX claim, at the test's own path.
sed "s|path: /srv/faultwin-results|path: $DIR/pv|" "$manifests/results-pv-hostpath.yaml" | kubectl apply -f - >/dev/null
kubectl apply -f "$manifests/results-pvc.yaml" -f "$manifests/runtime-class.yaml" >/dev/null
kubectl label node "$NODE" faultwin/soak-node=true >/dev/null

# job_state JOB: Complete or Failed once the Job has ended, else nothing.
job_state() { kubectl get "job/$1" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{"\n"}{end}' | grep -xE 'Complete|Failed' || true; }
# wait_job JOB SECONDS: the Job's end, Complete or not.
wait_job() {
  local s i
  for ((i = 0; i < $2; i += 2)); do
    s=$(job_state "$1")
    [[ -n $s ]] && { echo "$s"; return; }
    sleep 2
  done
  echo Timeout
}

# What a user sets: the shard count (completions, parallelism,
# maxFailedIndexes and the pods' annotation) and the Job's env.
soak=$(sed -e "s/^  completions: 4$/  completions: $SHARDS/" -e "s/^  parallelism: 4$/  parallelism: $SHARDS/" \
  -e "s/^  maxFailedIndexes: 4$/  maxFailedIndexes: $SHARDS/" -e "s|faultwin/shards: \"4\"|faultwin/shards: \"$SHARDS\"|" \
  -e "/- name: PASSES/{n;s/value: .*/value: \"$SOAK_PASSES\"/}" -e "/- name: LABEL_FILTER/{n;s/value: .*/value: \"$SOAK_LABELS\"/}" \
  "$manifests/soak-indexed-job.yaml")
[[ $(grep -cE "^  (completions|parallelism|maxFailedIndexes): $SHARDS\$|faultwin/shards: \"$SHARDS\"|value: \"($SOAK_PASSES|$SOAK_LABELS)\"" <<<"$soak") -ge 6 ]] ||
  { echo "cluster-test: $manifests/soak-indexed-job.yaml no longer has the lines a user sets" >&2; exit 1; }
job=$(kubectl create -f - -o name <<<"$soak")
job=${job#job.batch/}
echo "cluster-test: soak Job $job, $SHARDS shards over '$SOAK_LABELS', $SOAK_PASSES pass(es)"
soak_state=$(wait_job "$job" 1500)
step soak

merge=$(sed "s/SOAK_JOB_NAME/$job/" "$manifests/soak-merge-job.yaml" | kubectl create -f - -o name)
merge=${merge#job.batch/}
merge_state=$(wait_job "$merge" 300)
step merge

fail=0
check() {
  if eval "$2"; then echo "cluster-test: ok: $1"; else echo "cluster-test: FAIL: $1"; fail=1; fi
}
rows=$DIR/pv/$job
check "soak Job $job Complete (is $soak_state)" '[[ $soak_state == Complete ]]'
for ((k = 1; k <= SHARDS; k++)); do
  check "shard $k/$SHARDS wrote rows ($(wc -l <"$rows/results-shard-$k.jsonl" 2>/dev/null || echo no file))" "[[ -s $rows/results-shard-$k.jsonl ]]"
done
check "merge Job $merge Complete (is $merge_state)" '[[ $merge_state == Complete ]]'
check "merge summary: coverage ok" "grep -q 'coverage: ok' $rows/SUMMARY.md"
check "merge summary: provenance ok" "grep -q 'provenance: ok' $rows/SUMMARY.md"
[[ -f $rows/SUMMARY.md ]] && sed 's/^/  | /' "$rows/SUMMARY.md" | head -30
# Replayed as nobody, from a copy it can read.
mkdir -p "$OUT/replay"
cp "$rows"/results-shard-*.jsonl "$OUT/replay/" 2>/dev/null || true
chmod -R a+rX "$OUT/replay"
check "the merged rows replay without root" "setpriv --reuid=65534 --regid=65534 --clear-groups $FAULTWIN replay $OUT/replay"
step check
# A cluster is a neighbour like any other: refsup's windows run on the host
# beside the live node (its CNI bridge and pod veths, its containerd's shims,
# kubelet's chains and cgroups) without a refusal, and pass.
rm -f "$OUT/beside-refsup.jsonl"
check "refsup's W1 and W11 pass beside the running cluster" \
  "$FAULTWIN run --state-root $STATE_ROOT --refsup $top/bin/refsup --label-filter 'W1 || W11' --results $OUT/beside-refsup.jsonl >$OUT/beside-refsup.log 2>&1"
check "two rows beside it, both PASS" \
  "[[ \$($FAULTWIN rows --status PASS $OUT/beside-refsup.jsonl | wc -l) == 2 ]]"
step beside
((fail == 0)) || exit 1
