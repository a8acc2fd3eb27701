#!/usr/bin/env bash
# JAX / XLA profiles (XPlanes), side by side on one machine: Sightline's
# `summary X --report cuda_gpu_kern_sum` (the whole load — GPU work, host ranges, HLO programs —
# and one small table) against XProf's conversion of the same file to its trace viewer
# (`xspace_to_tool_data([X], "trace_viewer", {})` on a clean copy: tests/scripts/xprof_tool_data.py),
# interpreter start included; XProf's conversion alone (timed inside Python) is printed too.
# Wall time (ms, from date) and max RSS (from /usr/bin/time); RUNS runs each, alternating, the median printed.
#
#   benches/xplane_vs_xprof.sh SIGHTLINE PYTHON X.xplane.pb...
#
# PYTHON is a python with `xprof` installed (tests/xplane_xprof.rs makes one at
# $TMPDIR/sightline_xprof_venv/bin/python).
set -euo pipefail
SIGHTLINE=$1; PYTHON=$2; shift 2
RUNS=${RUNS:-5}
HERE=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mktemp -d)
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for xplane in "$@"; do
  s_t=(); s_m=(); p_t=(); p_m=(); c_t=()
  for _ in $(seq "$RUNS"); do
    t0=$(date +%s%N)
    /usr/bin/time -o "$OUT/time" -f "%M" "$SIGHTLINE" summary "$xplane" --report cuda_gpu_kern_sum >/dev/null 2>&1
    t=$(( ($(date +%s%N) - t0) / 1000000 )); read -r m < "$OUT/time"
    s_t+=("$t"); s_m+=("$m")
    t0=$(date +%s%N)
    /usr/bin/time -o "$OUT/time" -f "%M" "$PYTHON" "$HERE/tests/scripts/xprof_tool_data.py" "$xplane" "$OUT" trace_viewer >"$OUT/line" 2>/dev/null
    t=$(( ($(date +%s%N) - t0) / 1000000 )); read -r m < "$OUT/time"
    p_t+=("$t"); p_m+=("$m")
    c_t+=("$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["seconds"])' "$OUT/line")")
  done
  st=$(printf '%s\n' "${s_t[@]}" | median); sm=$(printf '%s\n' "${s_m[@]}" | median)
  pt=$(printf '%s\n' "${p_t[@]}" | median); pm=$(printf '%s\n' "${p_m[@]}" | median)
  ct=$(printf '%s\n' "${c_t[@]}" | median)
  echo "$(basename "$(dirname "$xplane")")/$(basename "$xplane") $(stat -c %s "$xplane") B: sightline ${st} ms ${sm} KB | xprof trace_viewer ${pt} ms ${pm} KB (conversion alone $(awk -v c="$ct" 'BEGIN {printf "%.0f", c * 1000}') ms) | $(awk -v a="$pt" -v b="$st" 'BEGIN {printf "%.1fx", a/b}')"
done
rm -rf "$OUT"
