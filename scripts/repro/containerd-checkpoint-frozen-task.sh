#!/bin/sh
# containerd killed while `ctr containers checkpoint --task` has its shim's
# runc checkpoint the task leaves the task frozen: after containerd is
# started again, `ctr task ls` lists it PAUSED and the retried checkpoint
# fails with "cannot pause a paused container"
# (docs/findings/containerd-checkpoint-frozen-task.md). Standalone: a
# containerd of its own, ctr, a /proc poll for the runc that checkpoints, a
# kill -9 of containerd, containerd started again, the retried checkpoint.
#
# Run as root on a host with containerd, runc, CRIU and busybox-static
# (BIN_DIR=<dir> puts another containerd, ctr, shim and runc first):
#   scripts/repro/containerd-checkpoint-frozen-task.sh
# It prints REPRODUCED or NOT REPRODUCED with what the retry said, and
# removes everything it made (its containerd's root, state and sockets
# under a temporary directory, its task's cgroup, the shim's socket).
set -u
. "$(dirname "$0")/containerd.inc"
$C run -d --runc-root "$S/runc" --cgroup "$CG/fw1" "$IMG" fw1 \
	/bin/sh -c 'i=0; while :; do i=$((i+1)); echo $i > /counter; sleep 0.1; done' >/dev/null || { echo "run failed"; exit 2; }
sleep 1

$C containers checkpoint --task fw1 localhost/containerd-repro-ckpt:1 >/dev/null 2>&1 &
ctr_pid=$!
seen=""
i=0
while [ -z "$seen" ] && [ $i -lt 20000 ] && kill -0 "$ctr_pid" 2>/dev/null; do
	# the shim's runc checkpoint of fw1: ctr paused the task before it,
	# and resumes it only once the checkpoint returns
	if seen=$(pgrep -f "runc .*$S/runc.* checkpoint " | head -1) && [ -n "$seen" ]; then
		kill -9 "$cpid"
	fi
	i=$((i + 1))
done
wait "$ctr_pid" 2>/dev/null
wait "$cpid" 2>/dev/null
[ -n "$seen" ] || { echo "NOT REPRODUCED: the shim's runc checkpoint was never seen"; exit 1; }
sleep 1

start || { echo "containerd did not start again: $(tail -3 "$S/containerd.log")"; exit 2; }
state=$($C task ls 2>&1 | awk '$1 == "fw1" {print $3}')
out=$($C containers checkpoint --task fw1 localhost/containerd-repro-ckpt:2 2>&1)
case "$state $out" in
*PAUSED*"paused"*) ;;
*) echo "NOT REPRODUCED: after the restart fw1 is ${state:-not listed}; the retried checkpoint says: $(echo "$out" | tail -1)"; exit 1 ;;
esac
# The workaround: resume the task (not part of a checkpoint's recovery),
# then checkpoint again.
if $C task resume fw1 >/dev/null 2>&1 && $C containers checkpoint --task fw1 localhost/containerd-repro-ckpt:3 >/dev/null 2>&1; then
	workaround="ctr task resume fw1, then the checkpoint: it succeeds"
else
	workaround="ctr task resume fw1, then the checkpoint: still fails"
fi
echo "REPRODUCED: containerd killed while the shim's runc checkpoint (pid $seen) ran; after its restart fw1 is $state and the retried checkpoint says: $(echo "$out" | tail -1); workaround: $workaround"
exit 0
