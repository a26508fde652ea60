#!/bin/sh
# runc killed after CRIU resumed the restored container, while `podman
# container restore` waits on it: the restore never returns (faultwin
# window PRL21; docs/findings/podman-restore-hangs.md). No faultwin:
# podman's own CLI, a /proc poll for the runc that restores and its CRIU,
# a kill -9 of runc once that CRIU has exited, then 30 s for podman.
#
# Run as root on a host with podman, runc, conmon, CRIU and busybox-static:
#   scripts/repro/podman-restore-hangs.sh
# It prints REPRODUCED (podman still running 30 s after) or NOT
# REPRODUCED, and removes everything it made.
set -u
. "$(dirname "$0")/podman.inc"

$P container restore fw1 >/dev/null 2>&1 &
podman_pid=$!
runc="" criu="" killed=""
i=0
while [ -z "$killed" ] && [ $i -lt 20000 ] && kill -0 "$podman_pid" 2>/dev/null; do
	[ -n "$runc" ] || runc=$(pgrep -f "runc --root=$S/runc .* restore " | head -1)
	if [ -n "$runc" ]; then
		c=$(pgrep -P "$runc" -x criu | head -1)
		[ -n "$c" ] && [ "$c" != "$criu" ] && criu=$c
		# CRIU has resumed the tasks and exited; runc still runs
		if [ -n "$criu" ] && ! kill -0 "$criu" 2>/dev/null && kill -0 "$runc" 2>/dev/null; then
			# the version check's CRIU is as short: only a CRIU that
			# restored leaves a task in the container's cgroup
			if [ -n "$(cat /sys/fs/cgroup/*/"$CG"/libpod-*/cgroup.procs /sys/fs/cgroup/"$CG"/libpod-*/cgroup.procs 2>/dev/null | head -1)" ]; then
				kill -9 "$runc" && killed=$runc
			fi
		fi
	fi
	i=$((i + 1))
done
[ -n "$killed" ] || { wait "$podman_pid" 2>/dev/null; echo "NOT REPRODUCED: runc was not caught between CRIU's exit and its own"; exit 1; }
t=0
while [ $t -lt 30 ] && kill -0 "$podman_pid" 2>/dev/null; do sleep 1; t=$((t + 1)); done
if kill -0 "$podman_pid" 2>/dev/null; then
	kill -9 "$podman_pid"
	echo "REPRODUCED: runc (pid $killed) killed after CRIU resumed the container; podman container restore still running 30 s later"
	exit 0
fi
wait "$podman_pid"
echo "NOT REPRODUCED: podman container restore returned $? within ${t}s after runc (pid $killed) was killed"
exit 1
