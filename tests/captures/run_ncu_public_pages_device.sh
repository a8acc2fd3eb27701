#!/bin/bash
# Runs on the GPU machine (`device`), where Nsight Compute 2025.3.1 is: ncu's own pages of the
# public reports (docs/ncu_public_reports.tsv), the oracle of tests/ncu_public_pages.rs. Takes
# PUB=path of a tar.xz of the reports (made beside the checkout from the folder
# SIGHTLINE_PUBLIC_NCU_REPORTS names: `ls | grep 'ncu-rep$' | tar cf - -T - | xz -9`), writes
# $OUT/pages.tar.xz: for each report R, `R.raw.csv`, `R.raw_base.csv` (--page raw, auto and base
# units), `R.details.csv` (--page details --print-details all) and `R.source_sass.csv`
# (--page source --print-source sass), each with its stderr beside it (`.err`) and ncu's exit
# status (`.rc`).
set -u
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
$NCU --version | tail -1
W=/tmp/pubpages; rm -rf $W; mkdir -p $W/in $W/out
xz -dc "$PUB" | tar xf - -C $W/in
ls $W/in | wc -l
page() { # report file, page name, ncu arguments...
  local f=$1 name=$2; shift 2
  local o="$W/out/${f%.ncu-rep}.$name"
  timeout 300 $NCU --import "$W/in/$f" --csv "$@" > "$o.csv" 2> "$o.err"; echo $? > "$o.rc"
}
export -f page; export NCU W
ls $W/in | grep 'ncu-rep$' | while IFS= read -r f; do
  printf '%s\0%s\0' "$f" raw; printf '%s\0%s\0' "$f" raw_base; printf '%s\0%s\0' "$f" details
  printf '%s\0%s\0' "$f" source_sass
done | xargs -0 -n 2 -P 14 bash -c '
  case $1 in
    raw) page "$0" raw --page raw ;;
    raw_base) page "$0" raw_base --page raw --print-units base ;;
    details) page "$0" details --page details --print-details all ;;
    source_sass) page "$0" source_sass --page source --print-source sass ;;
  esac'
ls $W/out | wc -l; cat $W/out/*.rc | sort | uniq -c
du -sh $W/out
tar cf - -C $W/out . | xz -6 -T8 > $OUT/pages.tar.xz
ls -la $OUT
