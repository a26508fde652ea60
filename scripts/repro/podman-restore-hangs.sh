#!/bin/sh
# runc killed after CRIU resumed the restored container, while `podman
# container restore` waits on it: conmon blocks reading runc's stderr, and
# the restore waits until podman's 240 s timeout
# (docs/findings/podman-restore-hangs.md). Standalone: podman's own CLI, a
# /proc poll for the runc that restores and for its CRIU, then a wait on
# that CRIU's own /proc entry in shell builtins only (the gap between CRIU's
# exit and runc's is a few ms: a poll that forks pgrep each turn misses it),
# a kill -9 of runc, then 30 s for podman. While podman waits, it shows what
# the container's new conmon waits on: its kernel stack, the system call it
# is in, the pipe that call reads and which processes hold that pipe open.
#
# Run as root on a host with podman, conmon, CRIU, busybox-static and an
# OCI runtime (runc; OCI_RUNTIME=crun for another, PODMAN= for another podman):
#   scripts/repro/podman-restore-hangs.sh
# It prints REPRODUCED (podman still running 30 s after) or NOT
# REPRODUCED, and removes everything it made.
#   HANG_WAIT=270 ...   wait that many seconds for podman (default 30),
#                       and print how and when it returned
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

$P container restore fw1 >"$S/restore.out" 2>&1 &
podman_pid=$!
runc="" killed=""
i=0
while [ -z "$killed" ] && [ $i -lt 20000 ] && kill -0 "$podman_pid" 2>/dev/null; do
	i=$((i + 1))
	[ -n "$runc" ] || runc=$(pgrep -f "$RTN --root=$S/runc .* restore " | head -1)
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
[ -n "$killed" ] || { wait "$podman_pid" 2>/dev/null; echo "NOT REPRODUCED: $RTN was not caught between CRIU's exit and its own"; exit 1; }
wait_for=${HANG_WAIT:-30}
[ "$wait_for" -ge 30 ] 2>/dev/null || wait_for=30

# What the container's conmon waits on: its kernel stack, its system call
# (number and first argument, the fd, from /proc/<pid>/syscall), that fd,
# and every process holding the same pipe (fd 0 reads, 1 and 2 write).
conmon_waits() {
	for c in $(pgrep -x conmon); do
		case "$(tr '\0' ' ' < "/proc/$c/cmdline" 2>/dev/null)" in *"$S"*) ;; *) continue ;; esac
		read -r nr fd _ < "/proc/$c/syscall" 2>/dev/null
		fdn=$(printf '%d' "$fd" 2>/dev/null)
		target=$(readlink "/proc/$c/fd/$fdn" 2>/dev/null)
		echo "conmon (pid $c): wchan $(cat "/proc/$c/wchan" 2>/dev/null); system call $nr (0 is read on x86_64) on fd $fdn = ${target:-?}"
		sed 's/^/  stack: /' "/proc/$c/stack" 2>/dev/null
		[ -n "$target" ] || continue
		for f in /proc/[0-9]*/fd/*; do
			[ "$(readlink "$f" 2>/dev/null)" = "$target" ] || continue
			p=${f#/proc/}
			p=${p%%/*}
			echo "  $target is open in pid $p ($(cat "/proc/$p/comm" 2>/dev/null)) as fd ${f##*/}"
		done
	done
}

t=0
while [ $t -lt 30 ] && kill -0 "$podman_pid" 2>/dev/null; do sleep 1; t=$((t + 1)); done
if ! kill -0 "$podman_pid" 2>/dev/null; then
	wait "$podman_pid"
	echo "NOT REPRODUCED: podman container restore returned $? within ${t}s after $RTN (pid $killed) was killed: $(tail -1 "$S/restore.out")"
	exit 1
fi
echo "$RTN (pid $killed) killed after CRIU resumed the container; podman container restore (pid $podman_pid) still running ${t} s later"
conmon_waits
while [ $t -lt "$wait_for" ] && kill -0 "$podman_pid" 2>/dev/null; do sleep 1; t=$((t + 1)); done
if kill -0 "$podman_pid" 2>/dev/null; then
	kill -9 "$podman_pid"
	echo "REPRODUCED: $RTN (pid $killed) killed after CRIU resumed the container; podman container restore still running $t s later"
	exit 0
fi
wait "$podman_pid"
rc=$?
echo "podman container restore returned $rc after $t s: $(tail -1 "$S/restore.out")"
conmon_waits
echo "REPRODUCED: $RTN (pid $killed) killed after CRIU resumed the container; podman container restore returned only after $t s (exit $rc)"
exit 0
