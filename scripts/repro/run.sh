#!/bin/sh
# Runs every reproduction in scripts/repro N times (default 10), prints
# k/N per script (how often the finding it reproduces, without faultwin,
# showed on this machine), and writes each script's transcript, the
# evidence a finding's page cites: the command, when and at which commit,
# the host (kernel, distro, cgroup version), every line the script
# printed, k/N and the exit status, to
# $REPRO_TRANSCRIPTS/<script>[-$REPRO_TAG].txt (default
# docs/findings/transcripts, checked in). A script exits 0 when it
# reproduced, 1 when it did not, 2 or more when it could not set up. A
# script marked "# repro: counts its own runs" is run once with N instead:
# it makes and removes its own state each run, prints its versions and
# "reproduced k/N" last, and exits 0 when it could run, 2 or more when it
# could not set up. A script run once per run prints its tools' versions
# on the first run only (REPRO_VERSIONS=0 on the others); each run's output
# is followed by "run <i>: exit <status>". make repro (nightly tier).
#   REPRO_ONLY="runc-restore-delete-rootfs"   only those scripts (names without .sh)
#   REPRO_TAG=v1.5.3 RUNC=/opt/.../runc       the transcript's name ends -v1.5.3; the
#                                             variables a script reads (RUNC, BIN_DIR,
#                                             OCI_RUNTIME, PODMAN, HANG_WAIT) pass through
set -u
n=${1:-10}
dir=$(dirname "$0")
out=${REPRO_TRANSCRIPTS:-$(cd "$dir/../.." && pwd)/docs/findings/transcripts}
tag=${REPRO_TAG:+-$REPRO_TAG}
mkdir -p "$out" || exit 2
commit=$(git -C "$dir" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git -C "$dir" status --porcelain -- . 2>/dev/null)" ] || commit="$commit (scripts/repro modified)"
case "$(stat -fc %T /sys/fs/cgroup)" in
cgroup2fs) cgv=v2 ;;
*) if [ -d /sys/fs/cgroup/unified ]; then cgv="v1 (hybrid)"; else cgv=v1; fi ;;
esac
# The variables the scripts read, as set for this run: the transcript's command line shows them.
envs=""
for v in RUNC KILL_AT PODMAN BIN_DIR OCI_RUNTIME HANG_WAIT; do
	eval "val=\${$v-}"
	[ -n "$val" ] && envs="$envs$v=$val "
done

status=0
for s in "$dir"/*.sh; do
	name=$(basename "$s" .sh)
	[ "$name" = run ] && continue
	if [ -n "${REPRO_ONLY:-}" ]; then
		case " $REPRO_ONLY " in *" $name "*) ;; *) continue ;; esac
	fi
	t=$out/$name$tag.txt
	{
		if grep -q '^# repro: counts its own runs' "$s"; then
			echo "\$ ${envs}scripts/repro/$name.sh $n"
		else
			echo "\$ for i in \$(seq $n); do REPRO_VERSIONS=\$((i == 1)) ${envs}scripts/repro/$name.sh; echo \"run \$i: exit \$?\"; done"
		fi
		echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ), faultwin commit $commit"
		echo "# host: $(uname -a); $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"); cgroup $cgv"
	} > "$t"
	if grep -q '^# repro: counts its own runs' "$s"; then
		"$s" "$n" > "$t.out" 2>&1
		rc=$?
		cat "$t.out" >> "$t"
		echo "# exit $rc" >> "$t"
		echo "$name: $(tail -1 "$t.out") (transcript $t)"
		[ $rc -eq 0 ] || { cat "$t.out"; status=1; }
		rm -f "$t.out"
		continue
	fi
	k=0 broken=0
	i=1
	while [ $i -le "$n" ]; do
		v=0
		[ $i -eq 1 ] && v=1
		o=$(REPRO_VERSIONS=$v "$s" 2>&1)
		rc=$?
		{ echo "$o"; echo "run $i: exit $rc"; } >> "$t"
		case $rc in
		0) k=$((k + 1)) ;;
		1) ;;
		*) broken=$((broken + 1)); echo "$name run $i: $o" ;;
		esac
		i=$((i + 1))
	done
	line="reproduced $k/$n (could not set up: $broken)"
	echo "$line" >> "$t"
	echo "$name: $line; last: $o (transcript $t)"
	[ $broken -eq 0 ] || status=1
done
exit $status
