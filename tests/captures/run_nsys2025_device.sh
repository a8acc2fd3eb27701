#!/bin/bash
# Runs on the GPU machine, from your repository root: Nsight Systems 2025.3.1 as it ships there inside
# Nsight Compute (target + a host folder under another name), laid out as nsys expects, then one
# capture exported to SQLite. Its report importer needs libdw/libelf, carried in .nsyslibs/lib (see
# ../shared/tracegen/README.md). usage: run_nsys2025_device.sh NAME [nsys profile options…] -- COMMAND…
#   e.g. bash run_nsys2025_device.sh graphs --trace=cuda,nvtx,osrt -- python3 graphs_nvtx.py
set -u
export LD_LIBRARY_PATH=$PWD/.nsyslibs/lib:${LD_LIBRARY_PATH:-}
S=/opt/nvidia/nsight-compute/2025.3.1/host; N=/tmp/nsys2025; mkdir -p $N
[ -d $N/target-linux-x64 ] || cp -a $S/target-linux-x64 $N/
ln -sfn $S/linux-desktop-glibc_2_11_3-x64 $N/host-linux-x64
NSYS=$N/target-linux-x64/nsys; $NSYS --version
name=$1; shift; opts=(); while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done; shift
W=/tmp/n25; mkdir -p $W
timeout 300 $NSYS profile --force-overwrite=true "${opts[@]}" -o $W/$name "$@" 2>&1 | grep -v "%" | tail -3
$NSYS export --type=sqlite --force-overwrite=true -o $W/$name.sqlite $W/$name.nsys-rep > /dev/null
rm -f $W/*.qdstrm; xz -T0 -6 -k $W/$name.sqlite; cp $W/$name.sqlite.xz $OUT/ && ls -la $OUT
