#!/bin/bash
# Runs on a GPU machine of N GPUs (the device tool, kind nvidia-h100-x2 or larger), from the repository
# root, with `.nsyslibs` carried (libdw/libelf for the report importer: ../../shared/tracegen/README.md):
#   bash tests/tracegen/run_nccl_device.sh N [WORKLOAD…]   (WORKLOAD: ddp, moe_a2a; default both)
# Records the NCCL workloads under Nsight Systems 2025.3.1 (one report per rank, `-o NAME_rank%q{RANK}`
# under torchrun) and under torch.profiler (one trace per rank + key_averages), runs that nsys's own
# `nsys stats` / `nsys analyze` on each export (raw output; tests/tracegen/golden_from_raw.py files it as
# golden-2025.3/), and brings all back as $OUT/nccl.tar.xz.
set -u
NP=${1:-2}; shift; WORKLOADS=${*:-ddp moe_a2a}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.nsyslibs/lib:${LD_LIBRARY_PATH:-}
S=/opt/nvidia/nsight-compute/2025.3.1/host; N=/tmp/nsys2025; mkdir -p $N
[ -d $N/target-linux-x64 ] || cp -a $S/target-linux-x64 $N/
ln -sfn $S/linux-desktop-glibc_2_11_3-x64 $N/host-linux-x64
NSYS=$N/target-linux-x64/nsys; export NSYS
W=/tmp/nccl; rm -rf $W; mkdir -p $W/raw $W/pytorch
LOG=$OUT/log.txt
{ $NSYS --version; nvidia-smi -L; nvidia-smi topo -m
  python3 -c 'import torch;print("torch", torch.__version__, "gpus", torch.cuda.device_count(), "nccl", torch.cuda.nccl.version())'; } >>$LOG 2>&1
cd tests/tracegen
cap() { # NAME SCRIPT ARGS…: one nsys report per rank, then each exported to SQLite
  name=$1; shift; t0=$(date +%s)
  timeout 240 torchrun --standalone --nproc_per_node=$NP --no-python \
    $NSYS profile --force-overwrite=true --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none \
    -o $W/${name}_rank%q{RANK} python3 "$@" >>$LOG 2>&1
  echo "== $name profiled in $(( $(date +%s) - t0 )) s" >>$LOG
  for r in $(seq 0 $((NP - 1))); do
    $NSYS export --type=sqlite --force-overwrite=true -o $W/${name}_rank$r.sqlite $W/${name}_rank$r.nsys-rep >>$LOG 2>&1
  done
  ls -la $W >>$LOG
}
# Rank 1 is the slow one in both: extra compute before its backward pass / its experts are hot.
declare -A ARGS=([ddp]="nccl_ddp.py --slow-rank 1" [moe_a2a]="nccl_moe_a2a.py --hot-rank 1")
SUFFIX=$([ "$NP" = 2 ] && echo "" || echo "_${NP}gpu")
for w in $WORKLOADS; do cap n25_$w$SUFFIX ${ARGS[$w]}; done
for w in $WORKLOADS; do
  t0=$(date +%s)
  timeout 150 torchrun --standalone --nproc_per_node=$NP ${ARGS[$w]} --profiler $W/pytorch >>$LOG 2>&1
  echo "== torch.profiler $w in $(( $(date +%s) - t0 )) s" >>$LOG
done
REPORTS="cuda_api_gpu_sum cuda_api_sum cuda_api_trace cuda_gpu_kern_gb_sum cuda_gpu_kern_sum cuda_gpu_mem_size_sum
 cuda_gpu_mem_time_sum cuda_gpu_sum cuda_gpu_trace cuda_kern_exec_sum cuda_kern_exec_trace nvtx_gpu_proj_sum
 nvtx_gpu_proj_trace nvtx_kern_sum nvtx_pushpop_sum nvtx_pushpop_trace nvtx_startend_sum nvtx_sum openacc_sum
 openmp_sum osrt_sum um_cpu_page_faults_sum um_sum um_total_sum"
RULES="cuda_api_sync:rows=-1 cuda_memcpy_async:rows=-1 cuda_memcpy_sync:rows=-1 cuda_memset_sync:rows=-1
 gpu_gaps:rows=-1:gap=1 gpu_time_util:rows=-1"
t0=$(date +%s)
for f in $W/*.sqlite; do
  t=$(basename $f .sqlite); mkdir -p $W/raw/$t
  for r in $REPORTS; do echo "stats $r $f $W/raw/$t/$r"; done
  for r in $RULES; do echo "analyze $r $f $W/raw/$t/analyze.${r%%:*}"; done
done | xargs -P 12 -L 1 bash -c 'if [ $0 = stats ]; then $NSYS stats --report $1 --format csv $2 >$3.out 2>$3.err;
  else $NSYS analyze --rule $1 --format csv $2 >$3.out 2>$3.err; fi'
echo "== golden in $(( $(date +%s) - t0 )) s" >>$LOG
cd $W && XZ_OPT=-T0 tar cJf $OUT/nccl.tar.xz *.sqlite pytorch raw && ls -la $OUT >>$LOG
