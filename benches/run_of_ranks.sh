#!/bin/bash
# A run of N ranks (one gen-trace export per rank) opened as one run, by the command line and by
# the window. Usage: benches/run_of_ranks.sh [RANKS] [EVENTS_PER_RANK] [DISPLAY]
# The window's time is wall time from start until its CPU use stops (every rank read for its
# digest and the run's analysis done: the process then idles), with its resident memory then and
# at its peak. Then (xdotool) it expands rank 0 — its whole trace loads — and collapses it again,
# with the resident memory after each: what one expanded rank costs over a collapsed one.
# SKIP_CLI=1 leaves out the command line (which loads every trace whole).
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
uptime
if [ -z "${SKIP_CLI:-}" ]; then
  echo "== sightline ranks (command line)"
  /usr/bin/time -f "wall %e s, max RSS %M KiB" $S ranks "$DIR"/rank_*.sqlite >/dev/null 2>/tmp/run_of_ranks.err
  grep -E "wall|straggler" /tmp/run_of_ranks.err
fi
# Waits until the window's CPU use stops (4 half-seconds in a row under 50 ms of CPU).
wait_idle() {
  local prev=0 idle=0 t
  while sleep 0.5; do
    t=$(awk '{print $14+$15}' /proc/$pid/stat)
    if [ $((t - prev)) -le 5 ]; then idle=$((idle + 1)); else idle=0; fi
    prev=$t
    [ $idle -ge 4 ] && break
  done
}
rss() { grep -E "VmRSS|VmHWM" /proc/$pid/status | tr -s ' \t' ' ' | paste -sd' '; }
echo "== sightline --ranks (window on $DISP)"
start=$(date +%s.%N)
DISPLAY=$DISP $S --ranks "$DIR"/rank_*.sqlite >/dev/null 2>&1 &
pid=$!
sleep 3
wait_idle
echo "opened in $(echo "$(date +%s.%N) - $start - 2.0" | bc) s (less the 2 s idle wait); $(rss)"
# The window at 0,0 filling a 1600x1000 screen: rank 0's title is at (46, 131).
win=$(DISPLAY=$DISP xdotool search --sync --pid $pid | tail -1)
DISPLAY=$DISP xdotool windowmove "$win" 0 0 windowsize "$win" 1600 1000
sleep 1
DISPLAY=$DISP xdotool mousemove 46 131 click 1
sleep 1
wait_idle
echo "rank 0 expanded: $(rss)"
DISPLAY=$DISP import -window root /tmp/run_of_ranks_expanded.png
DISPLAY=$DISP xdotool mousemove 46 131 click 1
sleep 1
wait_idle
echo "rank 0 collapsed again: $(rss)"
DISPLAY=$DISP import -window root /tmp/run_of_ranks_collapsed.png
kill $pid
