"""``sightline.ranks(paths).table()`` against ``sightline ranks PATHS --format csv --no-cache``,
for the fixtures' runs of ranks (nsys exports and PyTorch traces)."""

import pytest

import sightline
from compare import assert_frame_matches_csv
from conftest import FIXTURES, count, csv_rows, run_cli

NCCL = FIXTURES / "nccl"
RUNS = {
    "n25_ddp": [NCCL / "n25_ddp_rank0.sqlite", NCCL / "n25_ddp_rank1.sqlite"],
    "n25_moe_a2a": [NCCL / "n25_moe_a2a_rank0.sqlite", NCCL / "n25_moe_a2a_rank1.sqlite"],
    "kt_ddp": sorted((NCCL / "pytorch").glob("kt_ddp_rank*.pt.trace.json.gz")),
    "kt_ddp_4gpu": sorted((NCCL / "pytorch").glob("kt_ddp_4gpu_rank*.pt.trace.json.gz")),
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_rank_table_equals_the_command_line(name):
    paths = RUNS[name]
    assert len(paths) >= 2
    text = run_cli("ranks", *paths, "--format", "csv", "--no-cache").stdout.decode()
    run = sightline.ranks(paths, cache=False)
    rows = assert_frame_matches_csv(run.table(), csv_rows(text), name)
    assert rows == len(paths)
    assert [r for r, _ in run.ranks()] == sorted(r for r, _ in run.ranks())
    count("runs compared")


def test_instances_equal_the_command_line():
    paths = RUNS["n25_ddp"]
    text = run_cli("ranks", *paths, "--format", "csv", "--no-cache", "--instances").stdout.decode()
    # Two tables, each after its `# name` line.
    sections = text.split("# collectives\n")
    run = sightline.ranks(paths, cache=False)
    assert_frame_matches_csv(run.collectives(), csv_rows(sections[1]), "n25_ddp instances")
    count("runs compared (instances)")


def test_one_trace_is_not_a_run():
    with pytest.raises(sightline.SightlineError, match="two traces or more"):
        sightline.ranks([RUNS["n25_ddp"][0]], cache=False)
