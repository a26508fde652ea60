#!/usr/bin/env bash
# busy.sh N COMMAND...: runs COMMAND with N busy loops beside it at the
# caller's niceness (nice 0 under make), the load a neighbour's build puts
# on a shared host, and exits with COMMAND's status. The loops are killed
# whatever happens: at COMMAND's end, on an error, on ^C or TERM (the
# trap), and if this script is itself killed by SIGKILL, each loop sees
# it gone (once reaped) at its next look and exits.
set -uo pipefail
if (($# < 2)) || ! [[ $1 =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/busy.sh N COMMAND... (N busy loops beside COMMAND)" >&2
  exit 64
fi
n=$1
shift
loops=()
stop() {
  ((${#loops[@]})) || return 0
  kill -9 "${loops[@]}" 2>/dev/null
  wait "${loops[@]}" 2>/dev/null
  loops=()
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# a loop that does nothing but count, looking up every 50000 turns whether
# this script still runs
loop='p=$1; while kill -0 "$p" 2>/dev/null; do i=0; while [ $i -lt 50000 ]; do i=$((i+1)); done; done'
for ((k = 0; k < n; k++)); do
  sh -c "$loop" busy $$ &
  loops+=($!)
done
echo "busy.sh: $n busy loops (pids ${loops[*]}) beside: $*" >&2
"$@"
