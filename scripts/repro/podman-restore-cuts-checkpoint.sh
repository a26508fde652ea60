#!/bin/sh
# podman killed once `runc restore` has exited, before it saves the
# container's state, has already begun to delete the checkpoint: the
# checkpoint is cut or gone and the container does not run
# (docs/findings/podman-restore-cuts-checkpoint.md). Standalone: podman's
# own CLI, a /proc poll for the runc that restores, a wait on that runc's
# own /proc entry and then on the checkpoint's files (shell builtins only,
# so the kill follows by microseconds, not a fork's milliseconds), a kill -9
# of podman, then podman's own cleanup and the retried restore.
#
# Run as root on a host with podman, conmon, CRIU, busybox-static and an
# OCI runtime (runc; OCI_RUNTIME=crun for another, PODMAN= for another podman):
#   scripts/repro/podman-restore-cuts-checkpoint.sh
# It prints REPRODUCED (the checkpoint lost files) or NOT REPRODUCED, with
# the count of files before and after and the retried restore's output,
# and removes everything it made.
set -u
. "$(dirname "$0")/podman.inc"

id=$($P container inspect --format '{{.ID}}' fw1) || { echo "inspect failed"; exit 2; }
ck=$S/storage/overlay-containers/$id/userdata/checkpoint
files=$(find "$ck" -type f)
before=$(echo "$files" | wc -l)
[ "$before" -gt 0 ] || { echo "setup failed: no checkpoint at $ck"; exit 2; }

$P container restore fw1 >/dev/null 2>&1 &
podman_pid=$!
runc=""
i=0
while [ -z "$runc" ] && [ $i -lt 5000 ] && kill -0 "$podman_pid" 2>/dev/null; do
	runc=$(pgrep -f "$RTN --root=$S/runc .* restore " | head -1)
	i=$((i + 1))
done
[ -n "$runc" ] || { wait "$podman_pid" 2>/dev/null; echo "NOT REPRODUCED: $RTN restore never seen"; exit 1; }
# runc exited and its conmon reaped it: podman has runc's answer. About a
# millisecond later (0.7 to 1.3 ms in four runs here) it starts removing the
# checkpoint, and it saves the container's state only after that. Kill it
# the moment the first file of the checkpoint is gone: inside the span
# between removal and save that the finding names (a kill at runc's exit
# itself, before podman has runc's answer, leaves the checkpoint whole and
# the retry says "already exists": podman-restore-already-exists.sh).
while [ -e "/proc/$runc" ]; do :; done
gone=""
i=0
while [ -z "$gone" ] && [ $i -lt 200000 ]; do
	i=$((i + 1))
	for f in $files; do
		[ -e "$f" ] || { gone=$f; break; }
	done
done
# A restore that ran to its end removes the checkpoint by design: only a
# podman that died of the kill (137) reproduces.
kill -9 "$podman_pid" 2>/dev/null
wait "$podman_pid" 2>/dev/null
rc=$?
[ $rc -eq 137 ] || { echo "NOT REPRODUCED: podman's restore ended (exit $rc) before it was killed"; exit 1; }
after=$(find "$ck" -type f 2>/dev/null | wc -l)
sleep 1

$P container cleanup fw1 >/dev/null 2>&1
out=$($P container restore fw1 2>&1)
state=$($P container inspect --format '{{.State.Status}}' fw1 2>/dev/null)
if [ "$after" -lt "$before" ]; then
	if [ -d "$ck" ]; then what="cut: $after of its $before files left"; else what="gone: the directory removed"; fi
	echo "REPRODUCED: podman killed after $RTN restore (pid $runc) exited, once it had removed ${gone#$ck/}; the checkpoint is $what; the retried restore says: $(echo "$out" | tail -1); the container is $state"
	exit 0
fi
echo "NOT REPRODUCED: the checkpoint kept its $before files; the retried restore says: $(echo "$out" | tail -1); the container is $state"
exit 1
