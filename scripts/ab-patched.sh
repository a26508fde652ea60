#!/usr/bin/env bash
# A/B of a patch (docs/findings/patches): the finding's windows, each with
# its control (--control), on the release and on the patched build (the
# variants under drivers/described/patched, built by make patched), N
# passes, the two arms alternating pass by pass (release first on odd
# passes, patched first on even ones) so that both see the same host over
# the same hours, every row into one results file, then its summary.
# Each arm's pass is one soak of its own: AB_WRAP, a command prefix, runs
# each (flock FILE on a host whose users take turns), so the host is held
# a pass at a time.
#   scripts/ab-patched.sh [N]    AB_WINDOWS='PRL13 || PRL17' AB_RESULTS=out/x.jsonl.gz
# AB_DIR and AB_ARMS name another finding's windows and variants, e.g.
#   AB_DIR=windows/containerd AB_WINDOWS=CC1 AB_ARMS='containerd-ctr-release containerd-ctr-patched'
set -euo pipefail
n=${1:-5}
windows=${AB_WINDOWS:-PRL12 || PRL13 || PRL16 || PRL17}
out=${AB_RESULTS:-out/runc-ab.jsonl.gz}
dir=${AB_DIR:-windows/podman}
arms=(${AB_ARMS:-podman-runc-release podman-runc-patched})
faultwin=${FAULTWIN:-bin/faultwin}
root=${STATE_ROOT:-/var/lib/faultwin/state}
export FAULTWIN_SUPERVISORS=drivers/described/patched
mkdir -p "$(dirname "$out")"
for ((p = 1; p <= n; p++)); do
  order=("${arms[@]}")
  ((p % 2)) || order=("${arms[1]}" "${arms[0]}")
  for arm in "${order[@]}"; do
    echo "ab-patched: pass $p of $n on $arm ($windows, each with its control)"
    rc=0
    ${AB_WRAP:-} "$faultwin" soak -n 1 --control --windows "$dir" --variant "$arm" \
      --label-filter "$windows" --state-root "$root" --results "$out" || rc=$?
    # 1 and 2 are FAILs and INVALIDs: what is measured, not a broken run
    if ((rc != 0 && rc != 1 && rc != 2)); then echo "ab-patched: $arm pass $p: soak exit $rc"; exit "$rc"; fi
  done
done
"$faultwin" soak --summary "$out" || true
