#!/bin/bash
# Runs on the GPU machine (`device`): builds tests/captures/ncu_names.cu, profiles it with Nsight
# Compute 2025.3.1 (one metric: the names are what matters) and writes the report and ncu's own
# pages of it, gzipped, into $OUT (tests/fixtures/ncu_names/).
set -u
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi -L; $NCU --version | tail -1; nvcc --version | tail -1
D=$(dirname "$0"); W=/tmp/names; mkdir -p $W
nvcc -arch=sm_90 -o $W/ncu_names $D/ncu_names.cu || exit 1
$NCU --force-overwrite --metrics gpu__time_duration.sum -o $W/ncu_names $W/ncu_names > $W/ncu.log 2>&1
echo "ncu rc=$?"; tail -2 $W/ncu.log
R=$W/ncu_names.ncu-rep
$NCU --import $R --csv --page raw > $W/ncu_names.raw.csv

$NCU --import $R --csv --page details --print-details all > $W/ncu_names.details.csv
$NCU --import $R --csv --print-summary per-kernel > $W/ncu_names.summary.csv
for f in $W/ncu_names.ncu-rep $W/*.csv; do gzip -c $f > $OUT/$(basename $f).gz; done
ls -la $OUT
