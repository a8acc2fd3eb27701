#!/bin/bash
# A run of N ranks (one gen-trace export per rank) opened as one run, by the command line and by
# the window. Usage: benches/run_of_ranks.sh [RANKS] [EVENTS_PER_RANK] [DISPLAY]
# The window's time is wall time from start until its CPU use stops (every rank loaded and the
# run's analysis done: the process then idles), with its resident memory then and at its peak.
set -euo pipefail
RANKS=${1:-64}
EVENTS=${2:-100000}
DISP=${3:-:11}
S=${S:-./target/release/sightline}
DIR=/tmp/sightline-run-${RANKS}x${EVENTS}
mkdir -p "$DIR"
for i in $(seq 0 $((RANKS - 1))); do
  [ -f "$DIR/rank_$i.sqlite" ] || $S gen-trace --events "$EVENTS" --gpus 1 "$DIR/rank_$i.sqlite" >/dev/null
done
echo "== sightline ranks (command line)"
/usr/bin/time -f "wall %e s, max RSS %M KiB" $S ranks "$DIR"/rank_*.sqlite >/dev/null 2>/tmp/run_of_ranks.err
grep -E "wall|straggler" /tmp/run_of_ranks.err
echo "== sightline --ranks (window on $DISP)"
start=$(date +%s.%N)
DISPLAY=$DISP $S --ranks "$DIR"/rank_*.sqlite >/dev/null 2>&1 &
pid=$!
prev=0; idle=0
while sleep 0.25; do
  t=$(awk '{print $14+$15}' /proc/$pid/stat)
  now=$(date +%s.%N)
  if [ $((t - prev)) -le 2 ] && [ "$(echo "$now - $start > 2" | bc)" = 1 ]; then idle=$((idle + 1)); else idle=0; fi
  prev=$t
  [ $idle -ge 4 ] && break
done
echo "busy for $(echo "$now - $start - 1.0" | bc) s"
grep -E "VmRSS|VmHWM" /proc/$pid/status
kill $pid
