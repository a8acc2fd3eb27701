#!/bin/bash
# Runs on the GPU machine (`device`): builds tests/captures/ncu_names_common.cu twice (every
# kernel in one namespace; and with one extern "C" kernel more), profiles each with Nsight
# Compute 2025.3.1 (one metric: the names are what matters) and writes the reports and ncu's raw
# pages of them, gzipped, into $OUT (tests/fixtures/ncu_names/).
set -u
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi -L; $NCU --version | tail -1; nvcc --version | tail -1
D=$(dirname "$0"); W=/tmp/names_common; mkdir -p $W
for v in common common_c; do
  flag=""; [ $v = common_c ] && flag=-DWITH_C_KERNEL
  nvcc -arch=sm_90 $flag -o $W/ncu_names_$v $D/ncu_names_common.cu || exit 1
  $NCU --force-overwrite --metrics gpu__time_duration.sum -o $W/ncu_names_$v $W/ncu_names_$v > $W/$v.log 2>&1
  echo "$v: ncu rc=$?"; tail -2 $W/$v.log
  $NCU --import $W/ncu_names_$v.ncu-rep --csv --page raw > $W/ncu_names_$v.raw.csv
  cut -c1-300 $W/ncu_names_$v.raw.csv | cut -d, -f5 | head -12
done
for f in $W/*.ncu-rep $W/*.csv; do gzip -c $f > $OUT/$(basename $f).gz; done
ls -la $OUT
