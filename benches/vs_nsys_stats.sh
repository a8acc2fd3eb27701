#!/bin/bash
# Times `sightline summary` against `nsys stats` on the same export, side by side in one run:
# the five classic reports and the 24 reports nsys 2023.4 and Sightline share, RUNS times each,
# alternating the two programs; prints every wall time and the medians.
#
#   benches/vs_nsys_stats.sh EXPORT.sqlite [RUNS]
#
# SETS (default: "FIVE ALL") picks the report sets; RULE=1 also times `analyze --rule
# gpu_gaps:gap=1` against `nsys analyze` with the same rule (a 1 ms threshold: both print the
# same rows on the shared exports).
#
# NSYS (default: Nsight Systems 2023.4.4 as ../shared/tools/install-nsys.sh unpacks it) reads a
# copy of the export with a `greenContextId` column added to the GPU activity tables where it
# lacks one (nsys 2023.4's scripts select it; nsys's own exports of 2023.4 have it).
set -euo pipefail
EXPORT=$1
RUNS=${2:-5}
S=${S:-./target/release/sightline}
NSYS=${NSYS:-/opt/nsys2023/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nsys}
FIVE=cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,nvtx_sum
ALL=cuda_api_gpu_sum,cuda_api_sum,cuda_api_trace,cuda_gpu_kern_gb_sum,cuda_gpu_kern_sum,\
cuda_gpu_mem_size_sum,cuda_gpu_mem_time_sum,cuda_gpu_sum,cuda_gpu_trace,cuda_kern_exec_sum,\
cuda_kern_exec_trace,nvtx_gpu_proj_sum,nvtx_gpu_proj_trace,nvtx_kern_sum,nvtx_pushpop_sum,\
nvtx_pushpop_trace,nvtx_startend_sum,nvtx_sum,openacc_sum,openmp_sum,osrt_sum,\
um_cpu_page_faults_sum,um_sum,um_total_sum

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
COPY=$WORK/export.sqlite
cp "$EXPORT" "$COPY"
for t in KERNEL MEMCPY MEMSET; do
  table=$(sqlite3 "$COPY" "SELECT count(*) FROM sqlite_master WHERE name='CUPTI_ACTIVITY_KIND_$t'" 2>/dev/null || echo 0)
  has=$(sqlite3 "$COPY" "SELECT count(*) FROM pragma_table_info('CUPTI_ACTIVITY_KIND_$t') WHERE name='greenContextId'" 2>/dev/null || echo 1)
  if [ "$table" = 1 ] && [ "$has" = 0 ]; then
    sqlite3 "$COPY" "ALTER TABLE CUPTI_ACTIVITY_KIND_$t ADD COLUMN greenContextId INTEGER"
  fi
done
cat "$EXPORT" "$COPY" > /dev/null # both in the page cache

# Wall time in seconds with milliseconds (bash's `time`; /usr/bin/time gives only hundredths).
TIMEFORMAT=%3R
wall() { { time "$@" >/dev/null 2>&1; } 2>&1; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "export: $EXPORT ($(du -h "$EXPORT" | cut -f1)), $RUNS runs each, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for set in ${SETS:-FIVE ALL}; do
  reports=${!set}
  n=""; s=""
  for _ in $(seq "$RUNS"); do
    n="$n $(wall "$NSYS" stats --report "$reports" --format csv --force-export=false "$COPY")"
    s="$s $(wall "$S" summary "$EXPORT" --report "$reports" --format csv)"
  done
  nm=$(echo "$n" | median); sm=$(echo "$s" | median)
  echo "$set reports: nsys stats:$n s (median $nm s); sightline summary:$s s (median $sm s): $(echo "$nm $sm" | awk '{printf "%.1f", $1/$2}')x"
done
if [ "${RULE:-0}" = 1 ]; then
  n=""; s=""
  for _ in $(seq "$RUNS"); do
    n="$n $(wall "$NSYS" analyze --rule gpu_gaps:gap=1 --format csv --force-export=false "$COPY")"
    s="$s $(wall "$S" analyze "$EXPORT" --rule gpu_gaps:gap=1 --format csv)"
  done
  nm=$(echo "$n" | median); sm=$(echo "$s" | median)
  echo "gpu_gaps:gap=1: nsys analyze:$n s (median $nm s); sightline analyze:$s s (median $sm s): $(echo "$nm $sm" | awk '{printf "%.1f", $1/$2}')x"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
