#!/bin/sh
# podman killed while `runc restore` runs leaves runc's state of the
# container, and every later `podman container restore` fails
# with "runc: container with given ID already exists"
# (docs/findings/podman-restore-already-exists.md). Standalone: podman's own
# CLI, a /proc poll for the runc that restores, a kill -9 of podman, then
# podman's own cleanup and the retried restore, as a user would run them.
#
# Run as root on a host with podman, conmon, CRIU, busybox-static and an
# OCI runtime (runc; OCI_RUNTIME=crun for another, PODMAN= for another podman):
#   scripts/repro/podman-restore-already-exists.sh
# It prints REPRODUCED or NOT REPRODUCED and the retried restore's output,
# and removes everything it made (its own storage, runc root and cgroup
# parent under a temporary directory; no network: --network none).
set -u
. "$(dirname "$0")/podman.inc"

$P container restore fw1 >/dev/null 2>&1 &
podman_pid=$!
killed=""
i=0
while [ -z "$killed" ] && [ $i -lt 5000 ] && kill -0 "$podman_pid" 2>/dev/null; do
	# The runtime that restores the container, started by its new conmon.
	if killed=$(pgrep -f "$RTN --root=$S/runc .* restore " | head -1) && [ -n "$killed" ]; then
		kill -9 "$podman_pid"
	fi
	i=$((i + 1))
done
wait "$podman_pid" 2>/dev/null
[ -n "$killed" ] || { echo "NOT REPRODUCED: $RTN restore never seen"; exit 1; }
sleep 1

$P container cleanup fw1 >/dev/null 2>&1
out=$($P container restore fw1 2>&1)
case "$out" in
*"already exists"*) ;;
*) echo "NOT REPRODUCED: the retried restore says: $(echo "$out" | tail -1)"; exit 1 ;;
esac
# The workaround: delete runc's state of the container (outside podman's
# interface), then restore again; the checkpoint is still there.
for id in $("$RT" --root "$S/runc" list -q 2>/dev/null); do "$RT" --root "$S/runc" delete --force "$id" >/dev/null 2>&1; done
if $P container restore fw1 >/dev/null 2>&1 && [ "$($P container inspect --format '{{.State.Status}}' fw1 2>/dev/null)" = running ]; then
	workaround="$RTN delete --force of its state, then podman container restore: it runs again"
else
	workaround="$RTN delete --force of its state, then podman container restore: still not running"
fi
echo "REPRODUCED: podman killed while $RTN restore (pid $killed) ran; the retried restore says: $(echo "$out" | tail -1); workaround: $workaround"
exit 0
