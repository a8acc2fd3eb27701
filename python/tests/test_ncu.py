"""``sightline.ncu(R).raw()`` against ``sightline summary R --report ncu_raw --print-units base``:
the same columns, the units row as ``attrs["units"]``, and every number equal to the printed one
within its printed precision (the page prints thousands separators and two decimals), for the
fixture report and the shared ones."""

import pytest

import sightline
from compare import assert_frame_matches_csv
from conftest import FIXTURES, SHARED, count, csv_rows, run_cli, trace_id

REPORTS = [FIXTURES / "ncu_kt_pair.ncu-repz"]
if (SHARED / "ncu").is_dir():
    REPORTS += sorted(p for p in (SHARED / "ncu").iterdir() if p.name.endswith((".ncu-rep", ".ncu-repz", ".ncu-rep.gz")))


@pytest.mark.parametrize("path", REPORTS, ids=trace_id)
def test_raw_page_equals_the_command_line(path):
    text = run_cli("summary", path, "--report", "ncu_raw", "--print-units", "base").stdout.decode()
    rows = csv_rows(text)
    df = sightline.ncu(path).raw()
    assert list(df.attrs["units"].values()) == rows[1]
    n = assert_frame_matches_csv(df, [rows[0]] + rows[2:], path.name, separators=True, all_fixed=True)
    assert n == len(sightline.ncu(path)) > 0
    count("ncu reports compared")
    count("ncu kernels compared", n)


def test_a_trace_is_not_an_ncu_report():
    with pytest.raises(sightline.SightlineError, match="not an Nsight Compute report"):
        sightline.ncu(FIXTURES / "moe.sqlite")
