"""The command line's scope flags as keywords — ``range``, ``exclude_warmup``, ``exclude_nvtx``,
``skip_first``/``iteration`` and ``nsys_format`` — against ``summary``, ``analyze`` and ``gaps``
given the same flags; ``Run.sql`` against ``sightline sql --ranks``; ``sightline.digest``
against ``sightline digest`` (the same digests, read back by ``ranks``)."""

import pytest

import sightline
from compare import assert_frame_matches_csv
from conftest import FIXTURES, count, csv_rows, run_cli

REPORTS = ["cuda_gpu_kern_sum", "cuda_api_sum", "nvtx_sum", "cuda_gpu_trace", "iterations"]

# (trace, keywords, the command line's flags)
SCOPES = [
    (FIXTURES / "moe.sqlite", {"range": "600ms:650ms"}, ["--range", "600ms:650ms"]),
    (FIXTURES / "moe.sqlite", {"range": ":0.62s"}, ["--range", ":0.62s"]),
    (
        FIXTURES / "moe.sqlite",
        {"skip_first": 2, "iteration": "Complete_MoE_Workflow"},
        ["--skip-first", "2", "--iteration", "Complete_MoE_Workflow"],
    ),
    (FIXTURES / "moe.sqlite", {"exclude_nvtx": "Token_Prep"}, ["--exclude-nvtx", "Token_Prep"]),
    (FIXTURES / "transformer.sqlite", {"exclude_warmup": True}, ["--exclude-warmup"]),
    (FIXTURES / "nsys_train_cpu.sqlite", {"exclude_warmup": True}, ["--exclude-warmup"]),
    (FIXTURES / "moe.sqlite", {"nsys_format": "2025.3"}, ["--nsys-format", "2025.3"]),
    (FIXTURES / "moe_export2023.sqlite", {"nsys_format": "2023.4"}, ["--nsys-format", "2023.4"]),
]


def _id(scope):
    path, keywords, _ = scope
    return f"{path.name}:{','.join(f'{k}={v}' for k, v in keywords.items())}"


@pytest.mark.parametrize("scope", SCOPES, ids=_id)
def test_reports_in_a_scope_equal_the_command_line(scope):
    path, keywords, flags = scope
    t = sightline.open(path)
    whole = {name: len(t.report(name)) for name in REPORTS}
    changed = 0
    for name in REPORTS:
        done = run_cli("summary", path, "--report", name, "--format", "csv", *flags)
        df = t.report(name, **keywords)
        rows = assert_frame_matches_csv(df, csv_rows(done.stdout.decode()), f"{path.name} {name} {flags}")
        changed += rows != whole[name] or rows == 0
        count("scoped reports compared")
        count("scoped report rows compared", rows)
    if "nsys_format" not in keywords:
        # The scope must cut something, or the comparison says nothing about it.
        cut = t.report("cuda_gpu_trace", **keywords)
        assert len(cut) < whole["cuda_gpu_trace"], f"{path.name} {keywords}: nothing left out"


@pytest.mark.parametrize("scope", [s for s in SCOPES if "nsys_format" not in s[1]], ids=_id)
def test_gaps_in_a_scope_equal_the_command_line(scope):
    path, keywords, flags = scope
    done = run_cli("gaps", path, "--min", "10us", "--causes", "--format", "csv", *flags)
    df = sightline.open(path).gaps(min_ns=10_000, causes=True, **keywords)
    assert_frame_matches_csv(df, csv_rows(done.stdout.decode()), f"{path.name} gaps {flags}")
    assert ("Edge" in df.columns) == ("range" in keywords)
    count("scoped gap lists compared")


def test_rules_in_a_range_equal_the_command_line():
    path = FIXTURES / "moe.sqlite"
    t = sightline.open(path)
    for rule in sightline.rules():
        done = run_cli("analyze", path, "--rule", rule, "--format", "csv", "--range", "600ms:650ms")
        df = t.analyze(rule, range="600ms:650ms")
        printed = csv_rows(done.stdout.decode())
        if not printed:
            # Nothing found: the command line prints no table.
            assert len(df) == 0, f"{rule}: {len(df)} rows; the command line prints none"
            continue
        assert_frame_matches_csv(df, printed, f"{rule} in a range")
        count("scoped rules compared")


def test_bad_scopes_raise_the_command_lines_words():
    t = sightline.open(FIXTURES / "moe.sqlite")
    with pytest.raises(sightline.SightlineError, match="needs iteration"):
        t.report("cuda_gpu_kern_sum", skip_first=2)
    with pytest.raises(sightline.SightlineError, match="unknown Nsight Systems format '2019.1'"):
        t.report("cuda_gpu_kern_sum", nsys_format="2019.1")
    with pytest.raises(sightline.SightlineError, match="--exclude-nvtx"):
        t.gaps(exclude_nvtx="(")
    said = run_cli("summary", FIXTURES / "moe.sqlite", "--range", "5:3", check=False).stderr.decode()
    with pytest.raises(sightline.SightlineError) as raised:
        t.report("cuda_gpu_kern_sum", range="5:3")
    assert str(raised.value) in said


RUN = [FIXTURES / "nccl" / "n25_ddp_rank0.sqlite", FIXTURES / "nccl" / "n25_ddp_rank1.sqlite"]
RUN_QUERIES = [
    "select * from ranks",
    "select * from collectives order by rank, start limit 500",
    "select rank, count(*) as n, sum(end - start) as ns from kernels group by rank order by rank",
    "select * from memcpy order by rank, start limit 300",
]


def test_run_sql_equals_sql_ranks():
    run = sightline.ranks(RUN, cache=False)
    for query in RUN_QUERIES:
        done = run_cli("sql", "--ranks", "--no-cache", *RUN, query, "--format", "csv")
        rows = assert_frame_matches_csv(run.sql(query), csv_rows(done.stdout.decode()), query)
        assert rows > 0, query
        count("run queries compared")
    with pytest.raises(sightline.SightlineError):
        run.sql("delete from ranks")


def test_digest_writes_what_the_command_writes(tmp_path):
    ours, theirs = tmp_path / "py", tmp_path / "cli"
    assert sightline.digest(RUN, ours) == str(ours)
    run_cli("digest", *RUN, "--out", theirs)
    mine = sorted(p.relative_to(ours) for p in ours.rglob("*.parquet"))
    assert mine and mine == sorted(p.relative_to(theirs) for p in theirs.rglob("*.parquet"))
    # The run read back from the digests is the run of the traces.
    text = run_cli("ranks", theirs, "--format", "csv").stdout.decode()
    assert_frame_matches_csv(sightline.ranks(ours).table(), csv_rows(text), "ranks of digests")
    # Digesting again keeps the current digests; a folder of digests is not a trace.
    sightline.digest(RUN, ours)
    with pytest.raises(sightline.SightlineError, match="folder of digests"):
        sightline.digest([ours], tmp_path / "again")
    count("digest folders compared")
