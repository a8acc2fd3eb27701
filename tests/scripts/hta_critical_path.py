"""HTA 0.5's critical path of every ProfilerStep of one PyTorch trace, as JSON lines:
{"instance": i, "ok": bool, "summary": {bound_by: percent}, "total": path µs}
or {"instance": i, "error": "..."} where HTA fails on that step.
usage: python hta_critical_path.py TRACE.json.gz COUNT"""
import json
import logging
import os
import shutil
import sys
import tempfile
import warnings

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis  # noqa: E402

src, count = sys.argv[1], int(sys.argv[2])
folder = tempfile.mkdtemp()
shutil.copy(src, os.path.join(folder, os.path.basename(src)))
analysis = TraceAnalysis(trace_dir=folder)
for i in range(count):
    try:
        graph, ok = analysis.critical_path_analysis(
            rank=0, annotation="ProfilerStep", instance_id=i
        )
        summary = graph.summary()
        total = float(graph.get_critical_path_breakdown().duration.sum())
        out = {"instance": i, "ok": bool(ok), "total": total,
               "summary": {k: float(v) for k, v in summary.items() if k}}
    except Exception as e:  # HTA fails on some steps; the test says which
        out = {"instance": i, "error": f"{type(e).__name__}: {e}"}
    print(json.dumps(out), flush=True)
shutil.rmtree(folder, ignore_errors=True)
