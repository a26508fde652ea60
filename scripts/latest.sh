#!/usr/bin/env bash
# Runs, on every variant under drivers/described/variants, the windows of
# the supervisor it varies that are labelled `finding` (their verdicts are
# written up under docs/findings), N passes each, into out/latest/<name>.
# Does a finding still show on the newest release? make latest.
set -euo pipefail
n=${1:-10}
faultwin=${FAULTWIN:-bin/faultwin}
root=${STATE_ROOT:-/var/lib/faultwin/state}
mkdir -p out/latest
export FAULTWIN_SUPERVISORS=drivers/described/variants
status=0
for v in drivers/described/variants/*.yaml; do
  name=$(sed -n 's/^name: *//p' "$v" | head -1)
  base=$(sed -n 's/^variant_of: *//p' "$v" | head -1)
  [[ -n $name && -n $base && -d windows/$base ]] || { echo "latest: $v: no name, variant_of or windows/<base>"; status=64; continue; }
  echo "latest: $n passes of windows/$base (label finding) on $name"
  rc=0
  "$faultwin" soak -n "$n" --windows "windows/$base" --variant "$name" --label-filter finding \
    --state-root "$root" --results "out/latest/$name.jsonl.gz" || rc=$?
  # 1 and 2 are the supervisor's FAILs and INVALIDs: findings, not a broken run
  if ((rc != 0 && rc != 1 && rc != 2)); then echo "latest: $name: soak exit $rc"; status=$rc; fi
done
exit $status
