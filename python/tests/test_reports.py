"""``Trace.report(name)`` against ``sightline summary TRACE --report all --format csv`` (every
report, each after its ``# NAME`` line) for every fixture export and PyTorch trace and every
nsys export and PyTorch trace of ../shared/traces: every report the command line prints is compared cell by cell, and every one it
prints nothing for has no rows in Python. One trace is also compared report by report with
``--report NAME``, as a user would ask for it."""

import pytest

import sightline
from compare import assert_frame_matches_csv
from conftest import FIXTURES, all_traces, count, csv_rows, run_cli, trace_id

NAMES = sightline.reports()


def printed_reports(text, names=NAMES):
    """Each report's CSV rows as ``summary --report all --format csv`` prints them (each after
    its ``# NAME`` line)."""
    sections, current = {}, None
    lines = []
    for line in text.split("\n"):
        if line.startswith("# ") and line[2:] in names:
            if current is not None:
                sections[current] = "\n".join(lines)
            current, lines = line[2:], []
        else:
            lines.append(line)
    if current is not None:
        sections[current] = "\n".join(lines)
    return {name: csv_rows(body) for name, body in sections.items()}


@pytest.mark.parametrize("path", all_traces(), ids=trace_id)
def test_every_report_equals_the_command_line(path):
    done = run_cli("summary", path, "--report", "all", "--format", "csv", check=False)
    if done.returncode != 0:
        # A trace the command line cannot open (an .nsys-rep where no `nsys` converts it):
        # Python refuses it with the same words.
        with pytest.raises(sightline.SightlineError) as raised:
            sightline.open(path)
        assert f"sightline: {raised.value}" in done.stderr.decode()
        count("traces refused on both sides")
        return
    printed = printed_reports(done.stdout.decode())
    assert printed, f"{path}: the command line printed no report"
    t = sightline.open(path)
    count("traces")
    for name in NAMES:
        df = t.report(name)
        if name in printed:
            rows = assert_frame_matches_csv(df, printed[name], f"{path.name} {name}")
            count("reports compared")
            count("report rows compared", rows)
        else:
            assert len(df) == 0, f"{path.name} {name}: {len(df)} rows; the command line prints none"
            count("reports empty on both sides")


def test_reports_by_name_equal_the_command_line():
    path = FIXTURES / "moe.sqlite"
    t = sightline.open(path)
    compared = 0
    for name in NAMES:
        done = run_cli("summary", path, "--report", name, "--format", "csv")
        text = done.stdout.decode()
        if not text:
            assert len(t.report(name)) == 0
            continue
        assert_frame_matches_csv(t.report(name), csv_rows(text), f"moe {name}")
        compared += 1
    assert compared >= 10
    count("reports compared by name (moe)", compared)


def test_report_options_are_the_command_lines():
    path = FIXTURES / "moe.sqlite"
    t = sightline.open(path)
    for name, options, spec in [
        ("cuda_gpu_kern_sum", {"base": True}, "cuda_gpu_kern_sum:base"),
        ("idle_causes", {"min": "10us"}, "idle_causes:min=10us"),
    ]:
        text = run_cli("summary", path, "--report", spec, "--format", "csv").stdout.decode()
        assert_frame_matches_csv(t.report(name, **options), csv_rows(text), spec)
        count("reports with options compared")


def test_frames_are_typed():
    t = sightline.open(FIXTURES / "moe.sqlite")
    df = t.report("cuda_gpu_kern_sum")
    assert str(df["Instances"].dtype) == "int64"
    assert str(df["Time (%)"].dtype) == "float64"
    assert str(df["Name"].dtype) == "category"
    assert df["Time (%)"].sum() == pytest.approx(100.0, abs=0.5)
