#!/bin/sh
# runc delete removes a container's rootfs files after runc restore was
# killed (docs/findings/runc-restore-delete-rootfs.md). runc restore
# bind-mounts the bundle's rootfs at <runc root>/<id>/criu-root and
# unmounts it in a deferred call that SIGKILL skips; runc delete --force
# then removes <runc root>/<id> recursively, through that mount, and the
# files it removes are the bundle's own rootfs files.
#
# runc and CRIU only, no container engine: a busybox bundle made with
# `runc spec`, `runc run -d`, `runc checkpoint`, `runc restore -d` killed
# with SIGKILL the moment its criu-root mount appears (a /proc poll),
# `runc delete --force`, and the bundle's rootfs counted before and after.
#
# Run as root on a host with runc, CRIU and a static busybox:
#   scripts/repro/runc-restore-delete-rootfs.sh [N]
#   RUNC=/path/to/runc scripts/repro/runc-restore-delete-rootfs.sh 10
#   KILL_AT=criu ...   kill runc once its CRIU child runs, not at the mount
# It runs N times (default 10), prints each run and `reproduced k/N` last,
# and removes everything it made (its runc root, bundles, checkpoints and
# cgroups live under a temporary directory and /runc-repro-<pid>). It
# exits 0 when it could run, whatever the outcome; 2 when it could not set
# up.
# repro: counts its own runs (scripts/repro/run.sh passes N)
set -u
n=${1:-10}
RUNC=${RUNC:-runc}
KILL_AT=${KILL_AT:-mount}
# A CRIU of its own first, when there is one (Debian 12's 3.17 fails on newer kernels).
[ -x /opt/faultwin/criu/sbin/criu ] && PATH=/opt/faultwin/criu/sbin:$PATH

fail() { echo "could not set up: $*"; exit 2; }
[ "$(id -u)" = 0 ] || fail "run as root"
command -v "$RUNC" >/dev/null || fail "no runc ($RUNC)"
command -v criu >/dev/null || fail "no criu on PATH"
bb=""
for b in "$(command -v busybox 2>/dev/null)" /bin/busybox /usr/bin/busybox; do
	[ -n "$b" ] && [ -x "$b" ] && { bb=$b; break; }
done
[ -n "$bb" ] || fail "no busybox (install busybox-static)"
# The bundle has nothing but busybox: it must not need a loader.
case "$(LC_ALL=C ldd "$bb" 2>&1)" in
*"not a dynamic executable"* | *"statically linked"*) ;;
*) fail "$bb is dynamically linked (install busybox-static)" ;;
esac
case "$(uname -m)" in
x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; armv7l | armv6l) arch=arm ;;
i?86) arch=386 ;; ppc64le) arch=ppc64le ;; s390x) arch=s390x ;; riscv64) arch=riscv64 ;;
*) arch=$(uname -m) ;;
esac
case "$(stat -fc %T /sys/fs/cgroup)" in
cgroup2fs) cgv=v2 ;;
*) if [ -d /sys/fs/cgroup/unified ]; then cgv="v1 (hybrid)"; else cgv=v1; fi ;;
esac

echo "runc: $(command -v "$RUNC")"
"$RUNC" --version | sed 's/^/  /'
echo "criu: $(command -v criu): $(criu --version | head -1)"
echo "kernel: $(uname -a)"
echo "distro: $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
echo "cgroup: $cgv; arch: $arch; busybox: $bb; kill at: $KILL_AT"

S=$(mktemp -d /var/tmp/runc-repro.XXXXXX)
R=$S/runc
CG=/runc-repro-$$
cid=""

# Everything of one run goes: its processes, mounts, cgroups, runc state.
clean_run() {
	[ -n "$cid" ] || return 0
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -f "$h$CG/freezer.state" ] && echo THAWED > "$h$CG/freezer.state" 2>/dev/null
		for f in $(find "$h$CG" -name cgroup.procs 2>/dev/null); do
			for pid in $(cat "$f"); do kill -9 "$pid" 2>/dev/null; done
		done
	done
	for p in /proc/[0-9]*; do
		case "$( { tr '\0' ' ' < "$p/cmdline"; } 2>/dev/null)" in *"$S"*) kill -9 "${p#/proc/}" 2>/dev/null ;; esac
		case "$(readlink "$p/root" 2>/dev/null)" in "$S"*) kill -9 "${p#/proc/}" 2>/dev/null ;; esac
	done
	sleep 0.3
	"$RUNC" --root "$R" delete --force "$cid" >/dev/null 2>&1
	grep " $S/" /proc/self/mountinfo | awk '{print $5}' | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -d "$h$CG" ] && find "$h$CG" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	cid=""
}
cleanup() {
	clean_run
	# never remove through a mount: that is the bug this script shows
	if grep -q " $S/" /proc/self/mountinfo; then
		echo "left $S: still mounted under it"
	else
		rm -rf --one-file-system "$S"
	fi
}
trap cleanup EXIT
trap 'exit 3' INT TERM

# The template bundle: busybox, its applets as links, and some data.
T=$S/template
mkdir -p "$T/rootfs/bin" "$T/rootfs/data" "$T/rootfs/etc" "$T/rootfs/proc" "$T/rootfs/sys" "$T/rootfs/dev" "$T/rootfs/tmp" &&
	cp "$bb" "$T/rootfs/bin/busybox" &&
	for a in sh sleep cat echo ls; do ln -s busybox "$T/rootfs/bin/$a"; done &&
	for f in 1 2 3 4 5 6 7 8 9 10; do echo "data $f" > "$T/rootfs/data/file$f"; done &&
	echo "root:x:0:0:root:/:/bin/sh" > "$T/rootfs/etc/passwd" || fail "bundle rootfs"
(cd "$T" && "$RUNC" spec) || fail "runc spec"
# A workload that keeps writing, no terminal, a writable root, a cgroup of the script's own.
sed -i -e 's/"terminal": true/"terminal": false/' -e 's/"readonly": true/"readonly": false/' \
	-e 's|^\([[:space:]]*\)"sh"$|\1"sh", "-c", "i=0; while :; do i=$((i+1)); echo $i > /tmp/counter; sleep 0.1; done"|' \
	-e "s|^\\([[:space:]]*\\)\"linux\": {|\\1\"linux\": {\\n\\1\\t\"cgroupsPath\": \"$CG/CID\",|" "$T/config.json"
grep -q '"terminal": false' "$T/config.json" && grep -q '"readonly": false' "$T/config.json" &&
	grep -q 'echo $i > /tmp/counter' "$T/config.json" && grep -q "\"cgroupsPath\": \"$CG/CID\"" "$T/config.json" ||
	fail "runc spec's config.json is not in the shape this script edits"

count() { find "$1" | wc -l; }

k=0 measured=0 i=1
while [ "$i" -le "$n" ]; do
	cid=runc-repro-$$-$i
	B=$S/bundle$i
	mkdir -p "$B" && cp -a "$T/rootfs" "$B/rootfs" && sed "s|$CG/CID|$CG/$cid|" "$T/config.json" > "$B/config.json" || fail "bundle $i"
	before=$(count "$B/rootfs")
	# stdio /dev/null: the container inherits it, and CRIU dumps no file of the host
	"$RUNC" --root "$R" --log "$S/run$i.log" run -d --bundle "$B" "$cid" </dev/null >/dev/null 2>&1 ||
		fail "runc run: $(tail -1 "$S/run$i.log")"
	sleep 1
	"$RUNC" --root "$R" checkpoint --image-path "$S/ckpt$i" --work-path "$S/work$i" "$cid" >"$S/ckpt$i.out" 2>&1 ||
		fail "runc checkpoint: $(tail -1 "$S/ckpt$i.out"); CRIU: $(grep -h Error "$S/work$i/dump.log" 2>/dev/null | tail -3)"

	"$RUNC" --root "$R" restore -d --image-path "$S/ckpt$i" --work-path "$S/rwork$i" --bundle "$B" "$cid" \
		</dev/null >/dev/null 2>&1 &
	rpid=$!
	mnt=$R/$cid/criu-root
	seen=""
	j=0
	while [ -z "$seen" ] && [ $j -lt 20000 ] && kill -0 "$rpid" 2>/dev/null; do
		if [ "$KILL_AT" = criu ]; then
			for c in /proc/[0-9]*/stat; do
				{ read -r _ comm _ ppid _ < "$c"; } 2>/dev/null || continue
				[ "$ppid" = "$rpid" ] && [ "$comm" = "(criu)" ] && { seen="its CRIU child ${c#/proc/}"; seen=${seen%/stat}; break; }
			done
		elif grep -q " $mnt " /proc/self/mountinfo; then
			seen="$mnt mounted"
		fi
		[ -n "$seen" ] && kill -9 "$rpid"
		j=$((j + 1))
	done
	wait "$rpid" 2>/dev/null
	rc=$?
	if [ -z "$seen" ]; then
		echo "run $i: NOT MEASURED: runc restore exited ($rc) before the kill ($KILL_AT not seen)"
		clean_run
		rm -rf --one-file-system "$B" "$S/ckpt$i" "$S/work$i" "$S/rwork$i"
		i=$((i + 1))
		continue
	fi
	measured=$((measured + 1))
	sleep 0.5
	mounted_before=no
	grep -q " $mnt " /proc/self/mountinfo && mounted_before=yes
	del=$("$RUNC" --root "$R" delete --force "$cid" 2>&1)
	drc=$?
	after=$(count "$B/rootfs")
	mounted_after=no
	grep -q " $mnt " /proc/self/mountinfo && mounted_after=yes
	line="run $i: runc restore killed ($seen); criu-root mounted after the kill: $mounted_before"
	line="$line; runc delete --force: exit $drc${del:+, \"$(echo "$del" | tr '\n' ' ' | sed 's/ $//')\"}; criu-root mounted after delete: $mounted_after"
	if [ "$after" -lt "$before" ]; then
		k=$((k + 1))
		left=$(cd "$B/rootfs" 2>/dev/null && find . | sed 's|^\./||' | grep -v '^\.$' | tr '\n' ' ')
		echo "$line; bundle rootfs: $before entries before, $after after: REMOVED (left: ${left:-nothing})"
	else
		echo "$line; bundle rootfs: $before entries before, $after after: intact"
	fi
	clean_run
	rm -rf --one-file-system "$B" "$S/ckpt$i" "$S/work$i" "$S/rwork$i"
	i=$((i + 1))
done
echo "reproduced $k/$n: runc delete --force removed files of the bundle's rootfs after runc restore was killed ($measured of $n runs reached the kill)"
exit 0
