#!/bin/bash
# Runs on the GPU machine (`device`): which sections of a report make Nsight Compute 2025.3.1
# print which unit for the metrics whose unit differs between a `--set detailed` and a
# `--set full` report of the same ncu (derived__memory_l2_theoretical_sectors_global_excessive,
# sass__inst_executed_register_spilling_mem_{local,shared}). Profiles tests/captures/ncu_units.cu
# with the detailed set, the full set, detailed plus each section full adds, full less each of
# them, and single sections; prints each raw page's units of those metrics; writes the reports
# and ncu's raw pages (gzipped) into $OUT.
set -u
NCU=$(command -v ncu || echo /opt/nvidia/nsight-compute/2025.3.1/ncu)
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi -L; $NCU --version | tail -1; nvcc --version | tail -1
D=$(dirname "$0"); W=/tmp/units; mkdir -p $W
nvcc -O2 -arch=sm_90 -o $W/ncu_units $D/ncu_units.cu || exit 1
DETAILED="ComputeWorkloadAnalysis LaunchStats MemoryWorkloadAnalysis MemoryWorkloadAnalysis_Chart Occupancy SourceCounters SpeedOfLight SpeedOfLight_RooflineChart WorkloadDistribution"
EXTRA="InstructionStats MemoryWorkloadAnalysis_Tables NumaAffinity Nvlink_Tables Nvlink_Topology PmSampling SchedulerStats SpeedOfLight_HierarchicalDoubleRooflineChart SpeedOfLight_HierarchicalHalfRooflineChart SpeedOfLight_HierarchicalSingleRooflineChart SpeedOfLight_HierarchicalTensorRooflineChart WarpStateStats"
secs() { for s in "$@"; do printf -- '--section %s ' "$s"; done; }
prof() { name=$1; shift
  timeout 120 $NCU --force-overwrite -c 1 "$@" -o $W/$name $W/ncu_units > $W/$name.log 2>&1 || { echo "$name: ncu failed"; tail -3 $W/$name.log; return; }
  $NCU --import $W/$name.ncu-rep --csv --page raw > $W/$name.raw.csv 2> $W/$name.raw.err
  python3 - "$name" "$W/$name.raw.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[2])))
h, u = rows[0], rows[1]
want = ["derived__memory_l2_theoretical_sectors_global_excessive",
        "sass__inst_executed_register_spilling_mem_local",
        "sass__inst_executed_register_spilling_mem_shared",
        "derived__memory_l1_wavefronts_shared_excessive"]
print(f"{sys.argv[1]:<48} {len(h):>5} cols  " + "  ".join(
    repr(u[h.index(w)]) if w in h else "-" for w in want))
PY
}
prof detailed --set detailed
prof full --set full
prof detailed_sections $(secs $DETAILED)
for s in $EXTRA; do prof "detailed+$s" $(secs $DETAILED $s); done
for s in $EXTRA; do prof "full-$s" $(secs $DETAILED $(echo $EXTRA | tr ' ' '\n' | grep -vx $s)); done
for s in SourceCounters MemoryWorkloadAnalysis; do prof "only_$s" --section $s; done
prof "only_SourceCounters+InstructionStats" --section SourceCounters --section InstructionStats
prof "only_SourceCounters+WarpStateStats" --section SourceCounters --section WarpStateStats
for f in $W/detailed.ncu-rep $W/full.ncu-rep $W/detailed.raw.csv $W/full.raw.csv; do gzip -9 -c $f > $OUT/$(basename $f).gz; done
tar czf $OUT/all.tgz -C $W $(cd $W && ls *.ncu-rep *.raw.csv)
ls -la $OUT
