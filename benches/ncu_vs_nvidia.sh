#!/usr/bin/env bash
# Nsight Compute reports, side by side on one machine: Sightline's `summary --report ncu_raw`
# (load + ncu's raw page, every metric of every kernel) against NVIDIA's Python reader
# (`ncu_report.load_report`, then `action[name].value()` for every metric of every action, and
# every instance of instanced ones: tests/scripts/ncu_report_dump.py with output `-`),
# interpreter start included. Wall time and max RSS from /usr/bin/time; RUNS runs each,
# alternating, the median printed.
#
#   benches/ncu_vs_nvidia.sh SIGHTLINE PYTHON REPORT.ncu-rep...
#
# READER_ARGS=--values makes the reader read each metric's value alone (what ncu's raw page
# prints), not the instance values beside them too.
#
# PYTHON is a python with `ncu-report` installed (tests/ncu_nvidia_reader.rs makes one at
# /tmp/sightline-ncu-report-venv/bin/python). Reports are read as they are (unzip a .gz first
# to time the format ncu writes).
set -euo pipefail
SIGHTLINE=$1; PYTHON=$2; shift 2
RUNS=${RUNS:-3}
HERE=$(cd "$(dirname "$0")/.." && pwd)
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for report in "$@"; do
  s_t=(); s_m=(); p_t=(); p_m=()
  for _ in $(seq "$RUNS"); do
    read -r t m < <( { /usr/bin/time -f "%e %M" "$SIGHTLINE" summary "$report" --report ncu_raw >/dev/null; } 2>&1 | tail -1)
    s_t+=("$t"); s_m+=("$m")
    read -r t m < <( { /usr/bin/time -f "%e %M" "$PYTHON" "$HERE/tests/scripts/ncu_report_dump.py" "$report" - ${READER_ARGS:-} >/dev/null; } 2>&1 | tail -1)
    p_t+=("$t"); p_m+=("$m")
  done
  st=$(printf '%s\n' "${s_t[@]}" | median); sm=$(printf '%s\n' "${s_m[@]}" | median)
  pt=$(printf '%s\n' "${p_t[@]}" | median); pm=$(printf '%s\n' "${p_m[@]}" | median)
  echo "$(basename "$report"): sightline ncu_raw ${st} s ${sm} KB | ncu_report ${pt} s ${pm} KB | $(awk -v a="$pt" -v b="$st" 'BEGIN {printf "%.1fx", a/b}')"
done
