#!/bin/bash
# One `nsys stats` report from Python, side by side with nsys in one run: a fresh Python process
# running `sightline.open(EXPORT).report(REPORT)` (import, open and the DataFrame) against
# `nsys stats --report REPORT --format csv --force-export=false` on the same export, and the
# command line's `sightline summary --report REPORT --format csv` beside them; RUNS runs each,
# alternating, under `/usr/bin/time -f "%e s %M KB"` (wall seconds, peak RSS); prints every run and
# the medians (BENCHMARKS.md, "Python package against HTA and nsys stats").
#
#   benches/python_vs_nsys.sh EXPORT.sqlite [RUNS]        # RUNS defaults to 3
#
# REPORT (default cuda_gpu_kern_sum); PY (default target/python-venv/bin/python, where `pip
# install ./python` put the package); S (default ./target/release/sightline); NSYS (default
# Nsight Systems 2023.4.4 as ../shared/tools/install-nsys.sh unpacks it), which reads a copy of
# the export with a `greenContextId` column added to the GPU activity tables where it lacks one
# (nsys 2023.4's scripts select it), as benches/vs_nsys_stats.sh does.
#
# Before each run the machine must be quiet (no rustc, 1-minute load average under 1.5, the CPUs
# under 10 % busy over 2 s): the script waits, polling every 20 s, and prints the load average
# it started each run at.
set -euo pipefail
EXPORT=$1
RUNS=${2:-3}
REPORT=${REPORT:-cuda_gpu_kern_sum}
PY=${PY:-target/python-venv/bin/python}
S=${S:-./target/release/sightline}
NSYS=${NSYS:-/opt/nsys2023/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nsys}

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
COPY=$WORK/export.sqlite
cp "$EXPORT" "$COPY"
for t in KERNEL MEMCPY MEMSET; do
  table=$(sqlite3 "$COPY" "SELECT count(*) FROM sqlite_master WHERE name='CUPTI_ACTIVITY_KIND_$t'")
  has=$(sqlite3 "$COPY" "SELECT count(*) FROM pragma_table_info('CUPTI_ACTIVITY_KIND_$t') WHERE name='greenContextId'")
  if [ "$table" = 1 ] && [ "$has" = 0 ]; then
    sqlite3 "$COPY" "ALTER TABLE CUPTI_ACTIVITY_KIND_$t ADD COLUMN greenContextId INTEGER"
  fi
done
cat "$EXPORT" "$COPY" > /dev/null # both in the page cache

# Busy (not idle, not I/O-wait) jiffies of all CPUs since boot.
busy() { head -1 /proc/stat | awk '{print $2+$3+$4+$7+$8+$9}'; }
quiet() {
  while true; do
    rustc=$(pgrep -c rustc || true); load=$(cut -d' ' -f1 /proc/loadavg)
    b=$(busy); sleep 2; pct=$(( ($(busy) - b) * 100 / (2 * $(getconf CLK_TCK) * $(nproc)) ))
    if [ "$rustc" = 0 ] && [ "$pct" -lt 10 ] && awk "BEGIN {exit !($load < 1.5)}"; then echo "$load"; return; fi
    echo "  waiting: $rustc rustc, load average $load, CPUs $pct % busy" >&2; sleep 20
  done
}
# "SECONDS KB" of one run; its stdout goes to $WORK/out.
timed() { /usr/bin/time -f "%e %M" -o "$WORK/time" "$@" > "$WORK/out" 2>/dev/null; cat "$WORK/time"; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

CODE="import sys, sightline
df = sightline.open(sys.argv[1]).report(sys.argv[2])
print(len(df))"
echo "export: $EXPORT ($(du -h "$EXPORT" | cut -f1)), report $REPORT, $RUNS runs each"
declare -A secs kb
for n in $(seq "$RUNS"); do
  for what in python nsys summary; do
    load=$(quiet)
    case $what in
      python) r=$(timed "$PY" -c "$CODE" "$EXPORT" "$REPORT"); rows=$(cat "$WORK/out") ;;
      nsys) r=$(timed "$NSYS" stats --report "$REPORT" --format csv --force-export=false "$COPY")
            rows=$(($(grep -c . "$WORK/out") - 2)) ;;  # less nsys' "Processing [...]" line and the header
      summary) r=$(timed "$S" summary "$EXPORT" --report "$REPORT" --format csv)
               rows=$(($(grep -c . "$WORK/out") - 1)) ;;
    esac
    set -- $r
    secs[$what]="${secs[$what]:-} $1"; kb[$what]="${kb[$what]:-} $2"
    printf '  run %d %-8s %6.2f s %8.1f MiB  %s rows  (load average before %s)\n' "$n" "$what" "$1" \
      "$(echo "$2 / 1024" | bc -l)" "$rows" "$load"
  done
done
for what in python nsys summary; do
  m=$(echo "${secs[$what]}" | median); peak=$(echo "${kb[$what]}" | tr ' ' '\n' | sort -g | tail -1)
  printf '%-8s median %6.2f s (runs:%s) peak RSS %6.1f MiB\n' "$what" "$m" "${secs[$what]}" "$(echo "$peak / 1024" | bc -l)"
done
echo "nsys / python: $(echo "$(echo "${secs[nsys]}" | median) / $(echo "${secs[python]}" | median)" | bc -l | xargs printf '%.1f')x"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
