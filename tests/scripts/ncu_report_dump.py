#!/usr/bin/env python3
"""Every metric value of every workload of an Nsight Compute report, as NVIDIA's own reader
(`pip install ncu-report`) sees it: the second oracle of tests/ncu_nvidia_reader.rs.

Usage: ncu_report_dump.py REPORT.ncu-rep OUT.jsonl
       ncu_report_dump.py REPORT.ncu-rep -     (read every value, write nothing: for timing)
       ncu_report_dump.py REPORT.ncu-rep - --values
                                  (each metric's value alone, as ncu's raw page prints it: for
                                   timing against `sightline summary R --report ncu_raw`)

One JSON line per workload, `{"range": r, "action": a, "name": demangled name}`, then one per
metric: `[name, kind, metric_type, value, instances, correlation_ids]`, where a value is written
so that it compares exactly: floats as the hex of their bits ("f:3f800000" for a float,
"d:3ff0000000000000" for a double), integers as "u:N" (uint32) / "U:N" (uint64), strings as
"s:TEXT", no value as null; `instances` and `correlation_ids` are lists of such values (empty
when the metric has none).
"""

import json
import struct
import sys

import ncu_report

K = ncu_report.IMetric


def encode(metric, idx=None):
    """The metric's value (or its instance idx's) with its kind, exactly."""
    args = () if idx is None else (idx,)
    # has_value(idx) of ncu-report 2026.3.1 is False for instances that have values (and True
    # for some that are 0): an instance's value is read whatever it says.
    if idx is None and not metric.has_value():
        return None
    kind = metric.kind(*args)
    if kind == K.ValueKind_STRING:
        return "s:" + metric.as_string(*args)
    if kind == K.ValueKind_FLOAT:
        return "f:%08x" % struct.unpack("<I", struct.pack("<f", metric.as_double(*args)))[0]
    if kind == K.ValueKind_DOUBLE:
        return "d:%016x" % struct.unpack("<Q", struct.pack("<d", metric.as_double(*args)))[0]
    if kind == K.ValueKind_UINT32:
        return "u:%d" % metric.as_uint64(*args)
    if kind == K.ValueKind_UINT64:
        return "U:%d" % metric.as_uint64(*args)
    return "?:%d" % kind


def main():
    report_path, out_path = sys.argv[1], sys.argv[2]
    report = ncu_report.load_report(report_path)
    values = 0
    if sys.argv[3:] == ["--values"]:
        for r in range(report.num_ranges()):
            rng = report.range_by_idx(r)
            for a in range(rng.num_actions()):
                action = rng.action_by_idx(a)
                for name in action.metric_names():
                    metric = action[name]
                    if metric.has_value():
                        metric.value()
                    values += 1
        print(f"{report_path}: {values} values", file=sys.stderr)
        return
    with open(out_path if out_path != "-" else "/dev/null", "w", encoding="utf-8") as out:
        for r in range(report.num_ranges()):
            rng = report.range_by_idx(r)
            for a in range(rng.num_actions()):
                action = rng.action_by_idx(a)
                if out_path != "-":
                    out.write(json.dumps({"range": r, "action": a, "name": action.name()}) + "\n")
                for name in action.metric_names():
                    metric = action[name]
                    n = metric.num_instances()
                    instances = [encode(metric, i) for i in range(n)]
                    correlation = []
                    if n and metric.has_correlation_ids():
                        ids = metric.correlation_ids()
                        correlation = [encode(ids, i) for i in range(ids.num_instances())]
                    row = [name, metric.kind(), metric.metric_type(), encode(metric),
                           instances, correlation]
                    if out_path != "-":
                        out.write(json.dumps(row, ensure_ascii=False) + "\n")
                    values += 1 + n
    print(f"{report_path}: {values} values", file=sys.stderr)


if __name__ == "__main__":
    main()
