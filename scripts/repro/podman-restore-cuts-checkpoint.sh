#!/bin/sh
# podman killed once `runc restore` has exited, before it saves the
# container's state, has already begun to delete the checkpoint: the
# checkpoint is cut or gone and the container does not run (faultwin
# window PRL22; docs/findings/podman-restore-cuts-checkpoint.md). No
# faultwin: podman's own CLI, a /proc poll for the runc that restores, a
# wait on that runc's own /proc entry (shell builtins only, so the kill
# follows its exit by microseconds, not a fork's milliseconds), a kill -9
# of podman, then podman's own cleanup and the retried restore.
#
# Run as root on a host with podman, runc, conmon, CRIU and busybox-static:
#   scripts/repro/podman-restore-cuts-checkpoint.sh
# It prints REPRODUCED (the checkpoint lost files) or NOT REPRODUCED, with
# the count of files before and after and the retried restore's output,
# and removes everything it made.
set -u
. "$(dirname "$0")/podman.inc"

id=$($P container inspect --format '{{.ID}}' fw1) || { echo "inspect failed"; exit 2; }
ck=$S/storage/overlay-containers/$id/userdata/checkpoint
before=$(find "$ck" -type f | wc -l)
[ "$before" -gt 0 ] || { echo "setup failed: no checkpoint at $ck"; exit 2; }

$P container restore fw1 >/dev/null 2>&1 &
podman_pid=$!
runc=""
i=0
while [ -z "$runc" ] && [ $i -lt 5000 ] && kill -0 "$podman_pid" 2>/dev/null; do
	runc=$(pgrep -f "runc --root=$S/runc .* restore " | head -1)
	i=$((i + 1))
done
[ -n "$runc" ] || { wait "$podman_pid" 2>/dev/null; echo "NOT REPRODUCED: runc restore never seen"; exit 1; }
# runc exited (gone, or a zombie its parent has not reaped yet): podman is
# now between runc's return and its save of the container's state.
while read -r st < "/proc/$runc/stat" 2>/dev/null; do
	case "$st" in *") Z "*) break ;; esac
done
kill -9 "$podman_pid"
wait "$podman_pid" 2>/dev/null
after=$(find "$ck" -type f 2>/dev/null | wc -l)
sleep 1

$P container cleanup fw1 >/dev/null 2>&1
out=$($P container restore fw1 2>&1)
state=$($P container inspect --format '{{.State.Status}}' fw1 2>/dev/null)
if [ "$after" -lt "$before" ]; then
	if [ -d "$ck" ]; then what="cut: $after of its $before files left"; else what="gone: the directory removed"; fi
	echo "REPRODUCED: podman killed after runc restore (pid $runc) exited; the checkpoint is $what; the retried restore says: $(echo "$out" | tail -1); the container is $state"
	exit 0
fi
echo "NOT REPRODUCED: the checkpoint kept its $before files; the retried restore says: $(echo "$out" | tail -1); the container is $state"
exit 1
