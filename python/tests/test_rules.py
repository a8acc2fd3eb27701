"""``Trace.analyze(rule)`` against ``sightline analyze TRACE --rule all --format csv`` for every
fixture export and PyTorch trace and every shared one: every rule's findings, cell by cell; a
rule that finds nothing has no rows in Python either."""

import pytest

import sightline
from compare import assert_frame_matches_csv
from conftest import FIXTURES, count, csv_rows, fixture_exports, fixture_pytorch, run_cli, shared_traces, trace_id
from test_reports import printed_reports

RULES = sightline.rules()
TRACES = [p for p in fixture_exports() + fixture_pytorch() + shared_traces() if p.suffix != ".nsys-rep"]


@pytest.mark.parametrize("path", TRACES, ids=trace_id)
def test_every_rule_equals_the_command_line(path):
    text = run_cli("analyze", path, "--rule", "all", "--format", "csv").stdout.decode()
    printed = printed_reports(text, RULES)
    t = sightline.open(path)
    for rule in RULES:
        df = t.analyze(rule)
        if rule in printed:
            rows = assert_frame_matches_csv(df, printed[rule], f"{path.name} {rule}")
            count("rule results compared")
            count("rule rows compared", rows)
        else:
            assert len(df) == 0, f"{path.name} {rule}: {len(df)} rows; the command line prints none"
            count("rules empty on both sides")


def test_rule_options_are_the_command_lines():
    path = FIXTURES / "moe.sqlite"
    text = run_cli("analyze", path, "--rule", "gpu_gaps:gap=1", "--format", "csv").stdout.decode()
    df = sightline.open(path).analyze("gpu_gaps", gap=1)
    assert len(df) > 0
    assert_frame_matches_csv(df, csv_rows(text), "gpu_gaps:gap=1")
    with pytest.raises(sightline.SightlineError, match="unknown rule"):
        sightline.open(path).analyze("no_such_rule")
