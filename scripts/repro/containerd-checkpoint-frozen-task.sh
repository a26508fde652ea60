#!/bin/sh
# containerd killed while `ctr containers checkpoint --task` has its shim's
# runc run CRIU leaves the task frozen: after containerd is started again,
# `ctr task ls` lists it PAUSED and the retried checkpoint fails with
# "cannot pause a paused container" (faultwin windows CC1_50, CC1_150;
# docs/findings/containerd-checkpoint-frozen-task.md). No faultwin: a
# containerd of its own, ctr, a /proc poll for the CRIU that dumps, a
# kill -9 of containerd, containerd started again, the retried checkpoint.
#
# Run as root on a host with containerd, runc, CRIU and busybox-static:
#   scripts/repro/containerd-checkpoint-frozen-task.sh
# It prints REPRODUCED or NOT REPRODUCED with what the retry said, and
# removes everything it made (its containerd's root, state and sockets
# under a temporary directory, its task's cgroup, the shim's socket).
set -u
[ -x /opt/faultwin/criu/sbin/criu ] && PATH=/opt/faultwin/criu/sbin:$PATH
S=$(mktemp -d /var/tmp/containerd-repro.XXXXXX)
CG=/containerd-repro-$$
C="ctr --address $S/c.sock --namespace repro"
IMG=localhost/containerd-repro:1
ls /run/containerd/s 2>/dev/null | sort > "$S/sockets.before"

start() {
	containerd --config "$S/config.toml" >>"$S/containerd.log" 2>&1 &
	cpid=$!
	i=0
	while [ $i -lt 100 ]; do
		$C version >/dev/null 2>&1 && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

cleanup() {
	$C task resume fw1 >/dev/null 2>&1
	$C task kill -s SIGKILL fw1 >/dev/null 2>&1
	sleep 0.3
	$C task rm -f fw1 >/dev/null 2>&1
	$C containers rm fw1 >/dev/null 2>&1
	for p in /proc/[0-9]*; do
		case "$( { tr '\0' ' ' < "$p/cmdline"; } 2>/dev/null)" in *"$S"*) kill -9 "${p#/proc/}" 2>/dev/null ;; esac
	done
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -f "$h$CG/freezer.state" ] && echo THAWED > "$h$CG/freezer.state" 2>/dev/null
		for f in $(find "$h$CG" -name cgroup.procs 2>/dev/null); do
			for pid in $(cat "$f"); do kill -9 "$pid" 2>/dev/null; done
		done
	done
	sleep 0.5
	grep " $S" /proc/self/mountinfo | awk '{print $5}' | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -d "$h$CG" ] && find "$h$CG" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	# the shim's socket, made under /run/containerd/s whatever the config says
	ls /run/containerd/s 2>/dev/null | sort | comm -13 "$S/sockets.before" - | while read -r s; do rm -f "/run/containerd/s/$s"; done
	rm -rf "$S"
}
trap cleanup EXIT
trap 'exit 3' INT TERM

printf 'version = 2\nroot = "%s/root"\nstate = "%s/state"\ndisabled_plugins = ["io.containerd.grpc.v1.cri"]\n[grpc]\n  address = "%s/c.sock"\n[ttrpc]\n  address = "%s/c.sock.ttrpc"\n[debug]\n  address = ""\n' \
	"$S" "$S" "$S" "$S" > "$S/config.toml"
# No registry: an OCI archive of a busybox-static rootfs, blobs by sha256.
A=$S/img
mkdir -p "$A/rootfs/bin" "$A/oci/blobs/sha256" && cp /bin/busybox "$A/rootfs/bin/busybox" &&
	for a in sh sleep; do ln -s busybox "$A/rootfs/bin/$a"; done &&
	tar -C "$A/rootfs" -cf "$A/layer.tar" . || { echo "setup failed"; exit 2; }
blob() { d=$(sha256sum "$1" | cut -d' ' -f1); s=$(stat -c %s "$1"); mv "$1" "$A/oci/blobs/sha256/$d"; echo "$d $s"; }
set -- $(blob "$A/layer.tar"); L=$1 LS=$2
printf '{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"config":{}}' "$L" > "$A/config.json"
set -- $(blob "$A/config.json"); CF=$1 CS=$2
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' "$CF" "$CS" "$L" "$LS" > "$A/manifest.json"
set -- $(blob "$A/manifest.json"); M=$1 MS=$2
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s"}}]}' "$M" "$MS" "$IMG" > "$A/oci/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' > "$A/oci/oci-layout"
tar -C "$A/oci" -cf "$A/image.tar" . || { echo "setup failed"; exit 2; }

start || { echo "containerd did not start: $(tail -3 "$S/containerd.log")"; exit 2; }
$C images import "$A/image.tar" >/dev/null || { echo "image import failed"; exit 2; }
$C run -d --runc-root "$S/runc" --cgroup "$CG/fw1" "$IMG" fw1 \
	/bin/sh -c 'i=0; while :; do i=$((i+1)); echo $i > /counter; sleep 0.1; done' >/dev/null || { echo "run failed"; exit 2; }
sleep 1

$C containers checkpoint --task fw1 localhost/containerd-repro-ckpt:1 >/dev/null 2>&1 &
ctr_pid=$!
seen=""
i=0
while [ -z "$seen" ] && [ $i -lt 20000 ] && kill -0 "$ctr_pid" 2>/dev/null; do
	# the CRIU the shim's runc checkpoint runs, once it dumps into its work dir
	for p in $(pgrep -x criu); do
		case "$( { tr '\0' ' ' < "/proc/$p/cmdline"; } 2>/dev/null)" in
		*dump*) seen=$p; kill -9 "$cpid"; break ;;
		esac
	done
	i=$((i + 1))
done
wait "$ctr_pid" 2>/dev/null
wait "$cpid" 2>/dev/null
[ -n "$seen" ] || { echo "NOT REPRODUCED: the CRIU that dumps was never seen"; exit 1; }
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
echo "REPRODUCED: containerd killed while CRIU (pid $seen) dumped; after its restart fw1 is $state and the retried checkpoint says: $(echo "$out" | tail -1); workaround: $workaround"
exit 0
