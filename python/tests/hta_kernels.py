"""HTA's kernel frame of PyTorch profiler traces, for ``test_hta.py``: run in HTA's own virtual
environment (HTA needs pandas < 3, the package's tests run pandas 3), never imported by the tests.

usage: python hta_kernels.py OUT_DIR TRACE...

For each TRACE (``i`` its position), as an HTA user gets it: ``TraceAnalysis`` over a temporary
folder holding a link to the trace, ``include_last_profiler_step=True`` (HTA 0.5 drops the last
``ProfilerStep``'s kernels by default), rank 0's frame (``ta.t.get_trace(0)``), its GPU kernel rows
with their names resolved through ``ta.t.symbol_table``. Writes ``OUT_DIR/i.csv`` (name, ts, dur,
correlation, stream; ts and dur in µs as HTA's frame holds them, ts from HTA's own origin, dur as
written by Python, so that a fraction would show) and prints one JSON
line per trace: ``min_ts`` (that origin, µs of the trace's clock), the rows HTA's frame holds, or
``error`` when HTA raised.
"""

import csv
import json
import logging
import os
import sys
import tempfile
import traceback

logging.disable(logging.WARNING)  # HTA logs each parse at WARNING

from hta.trace_analysis import TraceAnalysis  # noqa: E402


def kernel_frame(trace, out_csv):
    with tempfile.TemporaryDirectory(prefix="hta-kernels-") as folder:
        link = os.path.join(folder, os.path.basename(trace))
        os.symlink(os.path.abspath(trace), link)
        # The rank is given, not left to HTA's folder scan: HTA takes it from the first line
        # matching `"rank": N` (`create_rank_to_trace_dict`), so a file of rank 1 (kt_ranks_rank1,
        # kt_ddp_rank1, HTA's own sampled_rank-1) would be rank 1 and `get_trace(0)` would raise;
        # a file with no `distributedInfo` is read line by line to its end before being made
        # rank 0 anyway. `trace_files={0: …}` is HTA's documented way to name the rank.
        ta = TraceAnalysis(trace_files={0: link}, trace_dir=folder, include_last_profiler_step=True)
        df = ta.t.get_trace(0)
        names = ta.t.symbol_table.get_sym_table()
        # HTA's GPU rows are `stream >= 0 & correlation >= 0` (`GPUKernelFilter`): kernels, memcpy,
        # memset. Kernels among them are those of category "kernel" ("Kernel" in Kineto's older
        # traces), the rows Sightline's `kernels` view holds (memcpy and memset are views of
        # their own).
        kernel_cats = {i for i, s in enumerate(names) if s.lower() == "kernel"}
        gpu = df[(df["stream"] >= 0) & (df["correlation"] >= 0)]
        kernels = gpu[gpu["cat"].isin(kernel_cats)]
        with open(out_csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["name", "ts", "dur", "correlation", "stream"])
            for name, ts, dur, corr, stream in zip(
                kernels["name"], kernels["ts"], kernels["dur"], kernels["correlation"], kernels["stream"]
            ):
                w.writerow([names[name], ts, dur, corr, stream])
        return {"min_ts": int(ta.t.min_ts), "rows": len(df), "gpu_rows": len(gpu), "kernels": len(kernels)}


def main():
    from importlib.metadata import version

    out_dir, traces = sys.argv[1], sys.argv[2:]
    versions = {p: version(p) for p in ("HolisticTraceAnalysis", "pandas")}
    for i, trace in enumerate(traces):
        try:
            result = kernel_frame(trace, os.path.join(out_dir, f"{i}.csv"))
        except Exception as e:
            result = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
        print(json.dumps({"trace": trace, "versions": versions, **result}), flush=True)


if __name__ == "__main__":
    main()
