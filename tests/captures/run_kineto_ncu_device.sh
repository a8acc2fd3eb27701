#!/bin/bash
# Runs on the GPU machine (`device`, an H100 on Firecracker, where ncu reads counters): the
# Kineto trace and the Nsight Compute report of tests/captures/kineto_ncu_pair.py, gzipped into
# $OUT, with ncu's raw page of the report (the kernel list ncu itself prints).
set -u
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
nvidia-smi -L; $NCU --version | tail -1; python3 -c 'import torch; print("torch", torch.__version__)'
D=$(dirname "$0"); W=/tmp/pair; mkdir -p $W
python3 $D/kineto_ncu_pair.py $W/kt_pair.pt.trace.json || exit 1
UNDER_NCU=1 timeout 500 $NCU --force-overwrite --nvtx --nvtx-include "captured/" -o $W/ncu_kt_pair \
  python3 $D/kineto_ncu_pair.py - > $W/ncu.log 2>&1; echo "ncu rc=$?"; tail -3 $W/ncu.log
$NCU --import $W/ncu_kt_pair.ncu-rep --csv --page raw > $W/ncu_kt_pair.raw.csv 2>/dev/null
echo "raw page: $(wc -l < $W/ncu_kt_pair.raw.csv) lines"
gzip -c $W/kt_pair.pt.trace.json > $OUT/kt_pair.pt.trace.json.gz
gzip -c $W/ncu_kt_pair.ncu-rep > $OUT/ncu_kt_pair.ncu-rep.gz
gzip -c $W/ncu_kt_pair.raw.csv > $OUT/ncu_kt_pair.raw.csv.gz
ls -la $OUT
