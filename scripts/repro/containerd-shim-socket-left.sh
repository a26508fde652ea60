#!/bin/sh
# The runc v2 shim killed the moment it runs `runc create` for `ctr run`
# leaves its socket under /run/containerd/s after the task and container are
# removed and containerd stopped
# (docs/findings/containerd-shim-socket-left.md, containerd#11292).
# Standalone: a containerd of its own, ctr, a /proc poll for the runc that
# creates, a kill -9 of the new shim, the user's removal, containerd
# stopped, the sockets listed.
#
# Run as root on a host with containerd, runc and busybox-static
# (BIN_DIR=<dir> puts another containerd, ctr, shim and runc first):
#   scripts/repro/containerd-shim-socket-left.sh
# It prints REPRODUCED or NOT REPRODUCED with the sockets left, and then
# removes everything it made, those sockets included.
set -u
. "$(dirname "$0")/containerd.inc"

$C run -d --runc-root "$S/runc" --cgroup "$CG/fw1" "$IMG" fw1 /bin/sh -c 'while :; do sleep 1; done' >/dev/null 2>&1 &
ctr_pid=$!
seen=""
i=0
while [ -z "$seen" ] && [ $i -lt 20000 ] && kill -0 "$ctr_pid" 2>/dev/null; do
	# the new shim's runc create of fw1
	if seen=$(pgrep -f "runc .*$S/runc.* create " | head -1) && [ -n "$seen" ]; then
		for p in $(pgrep -f "containerd-shim-runc-v2 .*-id fw1 .*-address $S/c.sock"); do kill -9 "$p"; done
	fi
	i=$((i + 1))
done
wait "$ctr_pid" 2>/dev/null
[ -n "$seen" ] || { echo "NOT REPRODUCED: the shim's runc create was never seen"; exit 1; }
sleep 1
# What a user removes: the task, the container; then containerd stopped.
$C task kill -s SIGKILL fw1 >/dev/null 2>&1; sleep 0.3
$C task rm -f fw1 >/dev/null 2>&1
$C containers rm fw1 >/dev/null 2>&1
kill "$cpid" 2>/dev/null; wait "$cpid" 2>/dev/null
left=""
for s in $(ls /run/containerd/s 2>/dev/null | sort | comm -13 "$S/sockets.before" -); do
	left="$left /run/containerd/s/$s"
done
[ -n "$left" ] || { echo "NOT REPRODUCED: no socket of the killed shim is left"; exit 1; }
# What containerd said of the dead shim, and whether anything listens on
# what is left (ss -xl lists the bound unix sockets).
echo "containerd's log of fw1's shim:"
grep -E 'shim disconnected|cleaning up|dead shim|fw1' "$S/containerd.log" | sed 's/^/  /' | tail -8
listening=""
for l in $left; do
	ss -xl 2>/dev/null | grep -q " ${l#unix://} " && listening="$listening $l"
done
echo "REPRODUCED: the shim killed at runc create (pid $seen); after the task and container were removed and containerd stopped, left:$left; listened on: ${listening:-none}"
exit 0
