#!/usr/bin/env python3
"""The SASS text NVIDIA's own reader (`pip install ncu-report`) gives at each PC of each profiled
kernel: the oracle of tests/ncu_public_reports.rs.

Usage: ncu_sass_by_pc.py OUT.jsonl REPORT.ncu-rep...

One JSON line per workload that has per-instruction `inst_executed` values:
`{"report": path, "range": r, "action": a, "pcs": [[pc, text], ...]}`, the PCs those values are
keyed by (their correlation ids), each with `action.sass_by_pc(pc)`. A report the reader cannot
load gets `{"report": path, "error": message}`.
"""

import json
import sys

import ncu_report


def main():
    out_path, reports = sys.argv[1], sys.argv[2:]
    with open(out_path, "w", encoding="utf-8") as out:
        for path in reports:
            try:
                report = ncu_report.load_report(path)
            except Exception as e:  # the reader's own failure is a result too
                out.write(json.dumps({"report": path, "error": str(e)}) + "\n")
                continue
            for r in range(report.num_ranges()):
                rng = report.range_by_idx(r)
                for a in range(rng.num_actions()):
                    action = rng.action_by_idx(a)
                    if "inst_executed" not in action.metric_names():
                        continue
                    metric = action["inst_executed"]
                    if metric.num_instances() == 0 or not metric.has_correlation_ids():
                        continue
                    ids = metric.correlation_ids()
                    pcs = [ids.as_uint64(i) for i in range(ids.num_instances())]
                    row = {"report": path, "range": r, "action": a,
                           "pcs": [[pc, action.sass_by_pc(pc)] for pc in pcs]}
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
