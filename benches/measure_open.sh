#!/usr/bin/env bash
# measure_open.sh CMD…: starts CMD (the window), prints the wall time to the last 0.25 s tick in
# which it used CPU (then idle for 2 s) and its RSS then; kills it. Used in BENCHMARKS.md.
"$@" >/dev/null 2>&1 &
pid=$!
start=$(date +%s.%N)
last_cpu=0; last_change=$start; idle=0
while kill -0 $pid 2>/dev/null; do
  sleep 0.25
  cpu=$(awk '{print $14+$15}' /proc/$pid/stat 2>/dev/null) || break
  now=$(date +%s.%N)
  if [ "$cpu" != "$last_cpu" ]; then last_cpu=$cpu; last_change=$now; idle=0; else idle=$((idle+1)); fi
  # idle: the window's 60 fps repaint costs nothing when nothing changes
  if [ $idle -ge 8 ]; then break; fi
done
rss=$(awk '/VmRSS/{print $2}' /proc/$pid/status)
echo "opened in $(echo "$last_change - $start" | bc) s, RSS ${rss} KB"
kill $pid
