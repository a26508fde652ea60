#!/bin/sh
# Runs every reproduction in scripts/repro N times (default 10) and prints
# k/N per script: how often the finding it reproduces, without faultwin,
# showed on this machine. A script exits 0 when it reproduced, 1 when it
# did not, 2 or more when it could not set up. A script marked "# repro:
# counts its own runs" is run once with N instead: it makes and removes
# its own state each run, prints "reproduced k/N" last, and exits 0 when it
# could run, 2 or more when it could not set up. make repro (nightly tier).
set -u
n=${1:-10}
dir=$(dirname "$0")
status=0
for s in "$dir"/*.sh; do
	[ "$(basename "$s")" = run.sh ] && continue
	if grep -q '^# repro: counts its own runs' "$s"; then
		out=$("$s" "$n" 2>&1)
		rc=$?
		echo "$(basename "$s"): $(echo "$out" | tail -1)"
		[ $rc -eq 0 ] || { echo "$out"; status=1; }
		continue
	fi
	k=0 broken=0
	i=1
	while [ $i -le "$n" ]; do
		out=$("$s" 2>&1)
		case $? in
		0) k=$((k + 1)) ;;
		1) ;;
		*) broken=$((broken + 1)); echo "$(basename "$s") run $i: $out" ;;
		esac
		i=$((i + 1))
	done
	echo "$(basename "$s"): reproduced $k/$n (could not set up: $broken); last: $out"
	[ $broken -eq 0 ] || status=1
done
exit $status
