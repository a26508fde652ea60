#!/bin/sh
# The shim killed while `ctr containers restore --live` has it run `runc
# restore` leaves the container record and its snapshot: the retried restore
# fails with `snapshot "fw1": already exists`
# (docs/findings/containerd-restore-leftovers.md). Standalone: a containerd
# of its own, ctr, a /proc poll for the runc that restores, a kill -9 of its
# shim, the retried restore as a user would run it.
#
# Run as root on a host with containerd, runc, CRIU and busybox-static
# (BIN_DIR=<dir> puts another containerd, ctr, shim and runc first):
#   scripts/repro/containerd-restore-leftovers.sh
# It prints REPRODUCED or NOT REPRODUCED with what the retry said, and
# removes everything it made.
set -u
. "$(dirname "$0")/containerd.inc"

$C run -d --runc-root "$S/runc" --cgroup "$CG/fw1" "$IMG" fw1 \
	/bin/sh -c 'i=0; while :; do i=$((i+1)); echo $i > /counter; sleep 0.1; done' >/dev/null || { echo "run failed"; exit 2; }
sleep 1
# A checkpoint of fw1, then fw1 removed, so the restore makes it again.
$C containers checkpoint --task fw1 localhost/containerd-repro-ckpt:1 >/dev/null &&
	$C task kill -s SIGKILL fw1 >/dev/null && sleep 0.5 && $C task rm fw1 >/dev/null && $C containers rm fw1 >/dev/null ||
	{ echo "checkpoint failed"; exit 2; }

$C containers restore --live fw1 localhost/containerd-repro-ckpt:1 >/dev/null 2>&1 &
ctr_pid=$!
seen=""
i=0
while [ -z "$seen" ] && [ $i -lt 20000 ] && kill -0 "$ctr_pid" 2>/dev/null; do
	# the new shim's runc restore of fw1
	if seen=$(pgrep -f "runc .*$S/runc.* restore " | head -1) && [ -n "$seen" ]; then
		for p in $(pgrep -f "containerd-shim-runc-v2 .*-id fw1 .*-address $S/c.sock"); do kill -9 "$p"; done
	fi
	i=$((i + 1))
done
wait "$ctr_pid" 2>/dev/null
[ -n "$seen" ] || { echo "NOT REPRODUCED: the shim's runc restore was never seen"; exit 1; }
sleep 1

out=$(timeout 30 $C containers restore --live fw1 localhost/containerd-repro-ckpt:1 2>&1)
case "$out" in
*"already exists"*) ;;
*) echo "NOT REPRODUCED: the retried restore says: $(echo "$out" | tail -1)"; exit 1 ;;
esac
# The workaround: remove what the cut restore left under fw1's name, then
# restore again from the same checkpoint.
timeout 10 $C task rm -f fw1 >/dev/null 2>&1; timeout 10 $C containers rm fw1 >/dev/null 2>&1; timeout 10 $C snapshots rm fw1 >/dev/null 2>&1
again=$(timeout 30 $C containers restore --live fw1 localhost/containerd-repro-ckpt:1 2>&1)
arc=$?
sleep 0.5
if $C task ls | grep -q '^fw1 .*RUNNING'; then
	workaround="ctr task rm -f, containers rm and snapshots rm of fw1, then the restore: it runs"
else
	workaround="ctr task rm -f, containers rm and snapshots rm of fw1, then the restore (exit $arc${again:+, \"$(echo "$again" | tail -1)\"}): fw1 is $($C task ls | awk '$1 == "fw1" {print $3}' | grep . || echo "not listed")"
	# What else the cut restore left: runc's own state directory of fw1
	# (ctr's --runc-root, per namespace), which runc restore refuses when
	# it exists. runc delete --force, then the directory itself if runc
	# does not know it (no state.json); the three removals again.
	d=$S/runc/repro/fw1
	if [ -d "$d" ]; then
		left="$d ($(ls "$d" 2>/dev/null | tr '\n' ' ' | sed 's/ $//'))"
		[ -e "$d/state.json" ] || left="$left, no state.json"
	fi
	timeout 10 $C task rm -f fw1 >/dev/null 2>&1; timeout 10 $C containers rm fw1 >/dev/null 2>&1; timeout 10 $C snapshots rm fw1 >/dev/null 2>&1
	del=$(runc --root "$S/runc/repro" delete --force fw1 2>&1 | tail -1)
	[ -d "$d" ] && rm -rf --one-file-system "$d" && del="${del:+$del; }the directory removed by hand"
	left="${left:-none}; runc delete --force fw1: ${del:-done}"
	third=$(timeout 30 $C containers restore --live fw1 localhost/containerd-repro-ckpt:1 2>&1)
	trc=$?
	sleep 0.5
	if $C task ls | grep -q '^fw1 .*RUNNING'; then
		workaround="$workaround; runc's state left: $left; then the restore: it runs"
	else
		workaround="$workaround; runc's state left: $left; then the restore (exit $trc${third:+, \"$(echo "$third" | tail -1)\"}): fw1 is $($C task ls | awk '$1 == "fw1" {print $3}' | grep . || echo "not listed")"
	fi
fi
echo "containerd's log of the cut restore:"
grep -E 'shim disconnected|cleaning up|dead shim|level=error' "$S/containerd.log" | sed 's/^/  /' | head -8
echo "REPRODUCED: the shim killed while runc restore (pid $seen) ran; the retried restore says: $(echo "$out" | tail -1); workaround: $workaround"
exit 0
