#!/bin/sh
# podman killed while `runc restore` runs loses the checkpoint: runc's state
# of the container stays, and every later `podman container restore` fails
# with "runc: container with given ID already exists" (faultwin windows PRL4,
# PR4, PRL7; findings F773f7b2f and F67549965). No faultwin: podman's own
# CLI, a /proc poll for the runc that restores, a kill -9 of podman, then
# podman's own cleanup and the retried restore, as a user would run them.
#
# Run as root on a host with podman, runc, conmon, CRIU and busybox-static:
#   scripts/repro/podman-restore-already-exists.sh
# It prints REPRODUCED or NOT REPRODUCED and the retried restore's output,
# and removes everything it made (its own storage, runc root and cgroup
# parent under a temporary directory; no network: --network none).
set -u
# CRIU 4.2, as faultwin's podman description puts it first (Debian 12's 3.17 fails here).
[ -x /opt/faultwin/criu/sbin/criu ] && PATH=/opt/faultwin/criu/sbin:$PATH
S=$(mktemp -d /var/tmp/podman-repro.XXXXXX)
CG=/podman-repro-$$
P="podman --root $S/storage --runroot $S/run --tmpdir $S/tmp --runtime runc --runtime-flag root=$S/runc --cgroup-manager cgroupfs --events-backend file --storage-opt overlay.skip_mount_home=true"

cleanup() {
	# Whatever holds the directory: the container, conmon, a CRIU.
	for p in /proc/[0-9]*; do
		case "$( { tr '\0' ' ' < "$p/cmdline"; } 2>/dev/null)" in *"$S"*) kill -9 "${p#/proc/}" 2>/dev/null ;; esac
		case "$(readlink "$p/cwd" 2>/dev/null)" in "$S"*) kill -9 "${p#/proc/}" 2>/dev/null ;; esac
	done
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		for f in $(find "$h$CG" -name cgroup.procs 2>/dev/null); do
			for pid in $(cat "$f"); do kill -9 "$pid" 2>/dev/null; done
		done
	done
	sleep 0.5
	$P rm --force --all >/dev/null 2>&1
	grep " $S" /proc/self/mountinfo | awk '{print $5}' | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -d "$h$CG" ] && find "$h$CG" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	rm -rf "$S"
}
trap cleanup EXIT
trap 'exit 3' INT TERM

mkdir -p "$S/rootfs/bin" && cp /bin/busybox "$S/rootfs/bin/busybox" &&
	for a in sh sleep; do ln -s busybox "$S/rootfs/bin/$a"; done &&
	tar -C "$S/rootfs" -cf "$S/rootfs.tar" . &&
	$P import "$S/rootfs.tar" localhost/podman-repro:1 >/dev/null 2>&1 || { echo "setup failed"; exit 2; }
$P run --detach --name fw1 --network none --cgroup-parent "$CG" --ulimit nofile=20000:20000 --ulimit nproc=32768:32768 localhost/podman-repro:1 \
	/bin/sh -c 'i=0; while :; do i=$((i+1)); echo $i > /counter; sleep 0.1; done' >/dev/null || { echo "run failed"; exit 2; }
sleep 1
$P container checkpoint fw1 >/dev/null || { echo "checkpoint failed"; exit 2; }

$P container restore fw1 >/dev/null 2>&1 &
podman_pid=$!
killed=""
i=0
while [ -z "$killed" ] && [ $i -lt 5000 ] && kill -0 "$podman_pid" 2>/dev/null; do
	# The runc that restores the container, started by its new conmon.
	if killed=$(pgrep -f "runc --root=$S/runc .* restore " | head -1) && [ -n "$killed" ]; then
		kill -9 "$podman_pid"
	fi
	i=$((i + 1))
done
wait "$podman_pid" 2>/dev/null
[ -n "$killed" ] || { echo "NOT REPRODUCED: runc restore never seen"; exit 1; }
sleep 1

$P container cleanup fw1 >/dev/null 2>&1
out=$($P container restore fw1 2>&1)
case "$out" in
*"already exists"*) ;;
*) echo "NOT REPRODUCED: the retried restore says: $(echo "$out" | tail -1)"; exit 1 ;;
esac
# The workaround: delete runc's state of the container (outside podman's
# interface), then restore again; the checkpoint is still there.
for id in $(runc --root "$S/runc" list -q 2>/dev/null); do runc --root "$S/runc" delete --force "$id" >/dev/null 2>&1; done
if $P container restore fw1 >/dev/null 2>&1 && [ "$($P container inspect --format '{{.State.Status}}' fw1 2>/dev/null)" = running ]; then
	workaround="runc delete --force of its state, then podman container restore: it runs again"
else
	workaround="runc delete --force of its state, then podman container restore: still not running"
fi
echo "REPRODUCED: podman killed while runc restore (pid $killed) ran; the retried restore says: $(echo "$out" | tail -1); workaround: $workaround"
exit 0
