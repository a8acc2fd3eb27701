#!/bin/bash
# The device call that made tests/fixtures/kineto_overhead/ (2026-11-28, `device run`, kind
# nvidia-h100-x1: one H100, PyTorch 2.11.0+cu130; 165 s on the machine). The call passed
# kineto_overhead.py inline (cat > /tmp/w.py <<'EOF' ... EOF); here it is read beside this file.
# Three runs of 100 iterations: 100 and 150 rounds a step (3.8 MB and 5.6 MB gzipped: 4 + 3 and
# 6 + 5 overhead events), and the 400 of `kineto_workloads.py many` with MANY_STEPS=100 (the
# 1 M-event trace of issue 33: 14.7 MB gzipped, 14 + 14 overhead events), each with its
# key_averages() CSVs, into $OUT.
cp "$(dirname "$0")/kineto_overhead.py" /tmp/w.py
cd $OUT; export PYTHONUNBUFFERED=1
for n in 100 150; do timeout 80 python3 /tmp/w.py kt_many_i$n 100 $n; done
timeout 170 python3 /tmp/w.py kt_many100 100 400
ls -la; for f in *.gz; do echo $f $(zcat $f|grep -c '"overhead"'); done
split -b 15M -d kt_many100.pt.trace.json.gz kt_many100.gz.part && rm kt_many100.pt.trace.json.gz
tar czf golden.tar.gz *.csv *.txt && rm *.csv *.txt; ls -la
