#!/usr/bin/env python3
"""The unit NVIDIA's own reader (`pip install ncu-report`) gives each metric of each report:
the oracle of tests/ncu_units_reader.rs.

Usage: ncu_units_dump.py OUT.jsonl REPORT.ncu-rep...

One JSON line per report, `{"report": path, "units": {metric name: unit}}` (a metric's unit as
`action[name].unit()` says it, from the first workload that has the metric), or
`{"report": path, "error": message}` for a report the reader cannot load.
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
            units = {}
            for r in range(report.num_ranges()):
                rng = report.range_by_idx(r)
                for a in range(rng.num_actions()):
                    action = rng.action_by_idx(a)
                    for name in action.metric_names():
                        if name not in units:
                            units[name] = action[name].unit()
            out.write(json.dumps({"report": path, "units": units}) + "\n")


if __name__ == "__main__":
    main()
