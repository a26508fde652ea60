#!/bin/sh
# runc killed after CRIU resumed the restored container, while `podman
# container restore` waits on it: the restore never returns (faultwin
# window PRL21; docs/findings/podman-restore-hangs.md). No faultwin:
# podman's own CLI, a /proc poll for the runc that restores and for its
# CRIU, then a wait on that CRIU's own /proc entry in shell builtins only
# (the gap between CRIU's exit and runc's is a few ms: a poll that forks
# pgrep each turn misses it), a kill -9 of runc, then 30 s for podman.
#
# Run as root on a host with podman, runc, conmon, CRIU and busybox-static:
#   scripts/repro/podman-restore-hangs.sh
# It prints REPRODUCED (podman still running 30 s after) or NOT
# REPRODUCED, and removes everything it made.
set -u
. "$(dirname "$0")/podman.inc"

# A task of the container in its cgroup: only a CRIU that restored leaves
# one (runc's version check runs a CRIU as short). Builtins only.
restored() {
	for f in /sys/fs/cgroup/*/"$CG"/libpod-*/cgroup.procs /sys/fs/cgroup/"$CG"/libpod-*/cgroup.procs; do
		[ -r "$f" ] && read -r t < "$f" 2>/dev/null && [ -n "$t" ] && return 0
	done
	return 1
}

$P container restore fw1 >/dev/null 2>&1 &
podman_pid=$!
runc="" killed=""
i=0
while [ -z "$killed" ] && [ $i -lt 20000 ] && kill -0 "$podman_pid" 2>/dev/null; do
	i=$((i + 1))
	[ -n "$runc" ] || runc=$(pgrep -f "runc --root=$S/runc .* restore " | head -1)
	[ -n "$runc" ] || continue
	criu=$(pgrep -P "$runc" -x criu | head -1)
	[ -n "$criu" ] || { kill -0 "$runc" 2>/dev/null || break; continue; }
	# This CRIU exited (gone, or a zombie runc has not reaped yet).
	while read -r st 2>/dev/null < "/proc/$criu/stat"; do
		case "$st" in *") Z "*) break ;; esac
	done
	if restored; then
		kill -9 "$runc" 2>/dev/null && killed=$runc
	fi
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
