"""Sightline from Python: the same engine as the ``sightline`` command line, linked in.

``sightline.open(path)`` loads any trace the command line opens (an nsys export or report, a
PyTorch profiler trace, a JAX profile) with the GIL released; ``Trace.sql`` runs a query over the
views of ``sightline sql``, ``Trace.report`` computes a report of ``summary --report NAME``,
``Trace.analyze`` a rule of ``analyze --rule NAME``, ``sightline.ncu(path).raw()`` reads an
Nsight Compute report's raw page, and ``sightline.ranks(paths)`` analyses a run of ranks as
``sightline ranks`` does. Every answer is a pandas DataFrame. The logic is all in Rust
(``sightline._sightline``); this layer only converts.
"""

import html as _html
import json as _json
import os as _os
import subprocess as _subprocess
import sys as _sys
import tempfile as _tempfile
import time as _time

from . import _sightline
from ._frame import frame as _frame
from ._sightline import SightlineError

_builtin_open = open  # ``open`` below is the package's own

__all__ = [
    "NcuReport",
    "SightlineError",
    "Run",
    "Trace",
    "Image",
    "digest",
    "ncu",
    "open",
    "ranks",
    "reports",
    "rules",
    "show",
    "__version__",
]
__version__ = _sightline.version()


def reports():
    """The names ``Trace.report`` takes, in the order ``summary --report all`` prints them."""
    return list(_sightline.reports())


def rules():
    """The names ``Trace.analyze`` takes, in the order ``analyze --rule all`` runs them."""
    return list(_sightline.rules())


def open(path):  # noqa: A001 - the package's verb, as ``sightline TRACE`` opens one
    """Loads the trace at ``path`` (raises ``SightlineError`` with Sightline's message)."""
    return Trace(_sightline.open(_os.fspath(path)))


def ranks(paths, collectives=None, align="recorded", cache=True):
    """The traces of one run's ranks (a list of paths, a folder of them, or a folder of
    digests), aligned on one clock as ``sightline ranks`` aligns them."""
    if isinstance(paths, (str, bytes, _os.PathLike)):
        paths = [paths]
    paths = [_os.fspath(p) for p in paths]
    return Run(_sightline.ranks(paths, collectives, align, bool(cache)))


def digest(traces, out, shard=None, shards=None, collectives=None, force=False):
    """``sightline digest TRACES… --out OUT``: each trace of a run (paths, or folders of them)
    reduced to its rank's digest in the folder ``out``, by the command's own code (a current
    digest is kept unless ``force``; ``shard="I/N"`` or ``shards=N`` as the command takes them).
    Returns ``out``; ``sightline.ranks(out)`` then opens the run without its traces."""
    if isinstance(traces, (str, bytes, _os.PathLike)):
        traces = [traces]
    traces = [_os.fspath(p) for p in traces]
    shards = None if shards is None else int(shards)
    _sightline.digest(traces, _os.fspath(out), shard, shards, collectives, bool(force))
    return _os.fspath(out)


def show(*paths, compare=False, ranks=None, ncu=None, cache=True, wait=False):
    """Opens Sightline's window on ``paths`` (one tab each; ``compare=True``: two traces side by
    side, as ``sightline --compare BASE NEW``; ``ranks=[...]``: a run of ranks, as ``--ranks``;
    ``ncu=REPORT``: attached to the first trace, as ``--ncu``) in a process of its own, so that a
    notebook or script goes on. Returns the ``subprocess.Popen`` of that process (``wait=True``:
    waits for the window to close and returns its exit code). Raises ``SightlineError`` with the
    window's own words when it cannot open (no display, a file it cannot read)."""
    spec = {
        "files": [_os.path.abspath(_os.fspath(p)) for p in paths],
        "compare": bool(compare),
        "ranks": [_os.path.abspath(_os.fspath(p)) for p in (ranks or [])],
        "ncu": None if ncu is None else _os.path.abspath(_os.fspath(ncu)),
        "no_cache": not cache,
    }
    if compare and len(spec["files"]) != 2:
        raise SightlineError("compare takes two traces: BASE and NEW")
    # What the window says goes to a file, not a pipe nobody reads while it runs.
    said = _tempfile.TemporaryFile()
    process = _subprocess.Popen(
        [_sys.executable, "-m", "sightline._window", _json.dumps(spec)],
        stdin=_subprocess.DEVNULL,
        stdout=said,
        stderr=said,
    )
    if wait:
        process.wait()
    else:
        # A window that cannot open ends at once: say why here rather than nowhere.
        deadline = _time.monotonic() + 2.0
        while process.poll() is None and _time.monotonic() < deadline:
            _time.sleep(0.05)
    if process.returncode not in (None, 0):
        said.seek(0)
        text = said.read().decode(errors="replace").strip()
        raise SightlineError(text.removeprefix("sightline: ") or f"the window ended with {process.returncode}")
    return process.returncode if wait else process


class Image:
    """A picture of the timeline (``Trace.render``): ``data`` holds the PNG (or SVG) bytes;
    Jupyter shows it inline."""

    def __init__(self, data, svg):
        self.data = data
        self.svg = svg

    def save(self, path):
        """Writes the picture to ``path``."""
        with _builtin_open(path, "wb") as f:
            f.write(self.data)
        return _os.fspath(path)

    def _repr_png_(self):
        return None if self.svg else self.data

    def _repr_svg_(self):
        return self.data.decode() if self.svg else None

    def __repr__(self):
        return f"<sightline.Image: {'SVG' if self.svg else 'PNG'}, {len(self.data)} bytes>"


def ncu(path):
    """Loads an Nsight Compute report (``.ncu-rep``, ``.ncu-rep.gz``, ``.ncu-repz``)."""
    return NcuReport(_sightline.ncu(_os.fspath(path)), _os.path.abspath(_os.fspath(path)))


def _spec(name, options):
    """``name:opt[=value]…`` as ``summary --report`` takes it: ``True`` is a flag."""
    parts = [name]
    for key, value in options.items():
        if value is None or value is False:
            continue
        parts.append(key if value is True else f"{key}={value}")
    return ":".join(parts)


class Trace:
    """A loaded trace. Immutable; queries and reports may run from several threads."""

    def __init__(self, handle):
        self._handle = handle
        self.ncu = None
        info, warnings = _sightline.trace_info(handle)
        self._info = dict(info)
        self._warnings = list(warnings)

    @property
    def path(self):
        return self._info["path"]

    @property
    def format(self):
        """``nsys``, ``pytorch``, ``xplane`` or ``ncu``."""
        return self._info["kind"]

    @property
    def warnings(self):
        """What the loader skipped or repaired (``summary`` prints these on stderr)."""
        return list(self._warnings)

    def info(self):
        """Format, path, span, GPUs and event counts, as a dict."""
        return {k: v for k, v in self._info.items() if k != "kind"}

    def sql(self, query, output="pandas", limit=None, timeout_s=30.0):
        """Runs a read-only query over the views of ``sightline sql`` (``kernels``, ``memcpy``,
        ``memset``, ``api``, ``ranges``, ``threads``, ``gpus``, ``gaps``, …). Integers are
        int64 (nullable ``Int64`` where a value is NULL), reals float64, text categorical.
        ``output="arrow"`` gives a ``pyarrow.Table`` (pyarrow must be installed)."""
        df = _frame(_sightline.trace_sql(self._handle, query, limit, float(timeout_s)))
        return _output(df, output)

    def report(
        self,
        name,
        output="pandas",
        *,
        range=None,  # noqa: A002 - the command line's --range
        exclude_warmup=False,
        exclude_nvtx=None,
        skip_first=None,
        iteration=None,
        nsys_format=None,
        **options,
    ):
        """The report ``name`` (see ``sightline.reports()``) as ``sightline summary TRACE
        --report NAME --format csv`` prints it: the same columns in the same order, the same
        rows, full values. ``options`` are the report's own (``t.report("cuda_gpu_kern_sum",
        base=True)`` is ``--report cuda_gpu_kern_sum:base``). A report the trace has no data
        for has no rows.

        The command line's scope flags are keywords: ``range="1.2s:1.5s"`` (``--range``: only
        events starting in it), ``exclude_warmup=True`` (``--exclude-warmup``),
        ``exclude_nvtx=REGEX`` (``--exclude-nvtx``), ``skip_first=N, iteration=REGEX``
        (``--skip-first N --iteration REGEX``) and ``nsys_format="2025.3"`` (``--nsys-format``:
        print as that nsys release prints; default, the release that wrote the export)."""
        scope = _scope(range, exclude_warmup, exclude_nvtx, skip_first, iteration, nsys_format)
        return _output(_frame(_sightline.trace_report(self._handle, _spec(name, options), *scope)), output)

    def analyze(self, rule, *, range=None, nsys_format=None, **options):  # noqa: A002
        """The rule ``rule`` (see ``sightline.rules()``) as ``sightline analyze TRACE --rule
        RULE --format csv`` prints it (``t.analyze("gpu_gaps", gap=1)`` is ``--rule
        gpu_gaps:gap=1``); no rows where the rule finds nothing. ``range`` and ``nsys_format``
        are ``analyze``'s ``--range`` and ``--nsys-format``."""
        scope = _scope(range, False, None, None, None, nsys_format)
        return _frame(_sightline.trace_rule(self._handle, _spec(rule, options), *scope))

    def gaps(
        self,
        min_ns=100_000,
        per_stream=False,
        causes=False,
        *,
        range=None,  # noqa: A002
        exclude_warmup=False,
        exclude_nvtx=None,
        skip_first=None,
        iteration=None,
    ):
        """The GPU's idle gaps of at least ``min_ns``, longest first, as ``sightline gaps
        --format csv --min NS`` lists them (``causes=True``: ``--causes``; ``range`` and the
        exclusions as in ``report``; with a range, the ``Edge`` column says which gaps it cut)."""
        scope = _scope(range, exclude_warmup, exclude_nvtx, skip_first, iteration, None)
        return _frame(
            _sightline.trace_gaps(self._handle, int(min_ns), bool(per_stream), bool(causes), *scope)
        )

    def render(
        self,
        path=None,
        start=None,
        end=None,
        *,
        range=None,  # noqa: A002 - the command line's --range
        width=1600,
        height=900,
        rows=None,
        theme="dark",
        colour_blind=False,
        critical_path=None,
        sql_tracks=(),
    ):
        """The timeline as ``sightline render TRACE --out FILE`` draws it: ``start``/``end`` (ns,
        or text with a unit, ``"1.2s"``) or ``range`` (``"1.2s:1.5s"``, ``"gpu"``, ``"all"``;
        default as the command chooses), ``rows`` (a regex over row titles), ``theme``
        (``"dark"``/``"light"``), ``colour_blind``, ``critical_path=N`` (outline iteration N's),
        ``sql_tracks`` (queries drawn as tracks). Returns an ``Image`` (inline in Jupyter); with
        ``path`` it is also written there (``.svg``: vectors, else PNG)."""
        if start is not None or end is not None:
            if range is not None:
                raise SightlineError("give start/end or range, not both")
            range = f"{'' if start is None else start}:{'' if end is None else end}"
        svg = path is not None and _os.fspath(path).lower().endswith(".svg")
        data = _sightline.trace_render(
            self._handle,
            None if range is None else str(range),
            int(width),
            int(height),
            rows,
            str(theme),
            bool(colour_blind),
            None if critical_path is None else int(critical_path),
            [str(q) for q in sql_tracks],
            svg,
        )
        image = Image(data, svg)
        if path is not None:
            image.save(path)
        return image

    def attach_ncu(self, report):
        """Joins an Nsight Compute report of the same program (a path or ``sightline.ncu(…)``)
        to this trace as ``summary TRACE --ncu R --report ncu_join`` does: a row per profiled
        kernel, in ncu's ID order, with the timeline kernel it measured (``Matched`` a bool;
        start, duration, device and stream of the match). ``attrs["matched"]`` counts the
        matches, ``attrs["notes"]`` says what the join could not check. The report is kept:
        ``Trace.ncu`` is it, and ``show()`` opens the window with it attached."""
        if not isinstance(report, NcuReport):
            report = ncu(report)
        columns, matched, notes = _sightline.ncu_join(self._handle, report._handle)
        df = _frame(columns)
        df["Matched"] = df["Matched"].astype(bool)
        df.attrs["matched"] = matched
        df.attrs["notes"] = list(notes)
        self.ncu = report
        return df

    def show(self, wait=False):
        """Opens this trace in Sightline's window, with the report ``attach_ncu`` attached
        (see ``sightline.show``)."""
        return show(self.path, ncu=None if self.ncu is None else self.ncu.path, wait=wait)

    def __repr__(self):
        i = self.info()
        return (
            f"<sightline.Trace {i['format']}: {i['path']}, span {i['span_ns']} ns, "
            f"GPUs [{i['gpus']}], {i['kernels']} kernels, {i['memcpy']} memcpy, "
            f"{i['api']} API calls, {i['ranges']} ranges>"
        )

    def _repr_html_(self):
        rows = "".join(
            f"<tr><th style='text-align:left'>{_html.escape(k)}</th>"
            f"<td style='text-align:left'>{_html.escape(str(v))}</td></tr>"
            for k, v in self.info().items()
        )
        return f"<table><caption>sightline.Trace</caption>{rows}</table>"


class Run:
    """A run of ranks on one clock (``sightline.ranks``)."""

    def __init__(self, handle):
        self._handle = handle
        self._clock, self._ranks = _sightline.run_info(handle)

    @property
    def clock(self):
        """How the ranks were put on one clock, in words."""
        return self._clock

    def ranks(self):
        """``(rank, trace path)`` pairs, in the table's order."""
        return list(self._ranks)

    def table(self):
        """The per-rank table of ``sightline ranks --format csv``."""
        return _frame(_sightline.run_table(self._handle))

    def collectives(self):
        """Every collective matched across ranks with each rank's arrival (``--instances``)."""
        return _frame(_sightline.run_instances(self._handle))

    def sql(self, query, output="pandas", limit=None, timeout_s=30.0):
        """A read-only query as ``sightline sql --ranks PATHS… QUERY`` runs it: the run's own
        tables (``ranks``, ``collectives``, ``steps``, …, from the digests) and every view of
        ``Trace.sql`` with a first column ``rank`` and times on the run's clock (a rank's trace
        is read at the first query that needs its events)."""
        df = _frame(_sightline.run_sql(self._handle, query, limit, float(timeout_s)))
        return _output(df, output)

    def __repr__(self):
        return f"<sightline.Run of {len(self.ranks())} ranks; clock: {self.clock}>"


class NcuReport:
    """An Nsight Compute report (``sightline.ncu``)."""

    def __init__(self, handle, path):
        self._handle = handle
        self.path = path

    def __len__(self):
        return _sightline.ncu_kernels(self._handle)

    def raw(self):
        """ncu's raw page as ``summary R --report ncu_raw --print-units base`` prints it: a row
        per profiled kernel, the fixed columns, then a column per metric in base units (full
        values; the page rounds to two decimals). ``attrs["units"]`` maps columns to units."""
        columns, units = _sightline.ncu_raw(self._handle)
        df = _frame(columns)
        df.attrs["units"] = dict(units)
        return df

    def details(self, kernel=None, launch=None, print_units="auto"):
        """ncu's details page as ``summary R --report ncu_details --format csv`` prints it
        (``ncu --import R --csv --page details``): a row per metric and rule of each section of
        each kernel, values as ncu prints them (scaled to the unit ncu chooses; ``print_units=
        "base"``: base units) read as numbers where they are numbers. ``kernel`` (a regex over
        the kernel's names) and ``launch`` (the N-th of those, from 0) pick kernels as ncu's
        ``-k regex:`` and ``--launch-skip`` do. Lines of another shape (a NUMA table) are in
        ``attrs["other_lines"]``."""
        return self._page("ncu_details", print_units, kernel, launch)

    def summary(self, print_units="auto"):
        """ncu's summary page (``--page summary``): a row per section metric of each group of
        launches of one kernel with one shape, its minimum, maximum and average."""
        return self._page("ncu_summary", print_units, None, None)

    def source(self, kernel=None, launch=None):
        """ncu's Source page (``--page source --print-source sass``) of the kernels ``kernel``
        and ``launch`` pick (as ``details``): a row per SASS instruction — ``ID``, ``Kernel
        Name``, ``Address`` (an int), ``Source`` (the instruction as ncu prints it), then the
        kernel's Source Counters (warp stall samples, instructions executed, memory traffic, …)
        at full precision. The SASS is disassembled from the cubin the report stores with
        NVIDIA's ``nvdisasm`` (the CUDA toolkit's, ``pip install nvidia-cuda-nvdisasm``, or
        ``SIGHTLINE_NVDISASM=PATH``)."""
        _find_nvdisasm()
        return _frame(_sightline.ncu_source(self._handle, kernel, None if launch is None else int(launch)))

    def _page(self, name, print_units, kernel, launch):
        columns, other = _sightline.ncu_page(
            self._handle, name, str(print_units), kernel, None if launch is None else int(launch)
        )
        df = _frame(columns)
        df.attrs["other_lines"] = [list(line) for line in other]
        return df

    def __repr__(self):
        return f"<sightline.NcuReport: {len(self)} kernels>"


def _find_nvdisasm():
    """NVIDIA's disassembler for ``NcuReport.source``: where Sightline looks for it
    (``SIGHTLINE_NVDISASM``, the PATH, ``CUDA_HOME``, ``/usr/local/cuda``), else the one the
    ``nvidia-cuda-nvdisasm`` package put into this Python's ``nvidia`` folder, which is then named
    in ``SIGHTLINE_NVDISASM`` for the library. Returns its path, or None."""
    import glob
    import importlib.util
    import shutil

    if _os.environ.get("SIGHTLINE_NVDISASM"):
        return _os.environ["SIGHTLINE_NVDISASM"]
    homes = [_os.environ.get(h) for h in ("CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]
    found = shutil.which("nvdisasm") or next(
        (p for h in homes if h for p in [_os.path.join(h, "bin", "nvdisasm")] if _os.path.isfile(p)), None
    )
    if found:
        return found
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        spec = None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        for candidate in sorted(glob.glob(_os.path.join(folder, "*", "bin", "nvdisasm"))):
            if _os.access(candidate, _os.X_OK):
                _os.environ["SIGHTLINE_NVDISASM"] = candidate
                return candidate
    return None


def _scope(range, exclude_warmup, exclude_nvtx, skip_first, iteration, nsys_format):  # noqa: A002
    """The six scope arguments the extension takes after a call's own (see ``scope.rs``)."""
    return (
        None if range is None else str(range),
        bool(exclude_warmup),
        exclude_nvtx,
        None if skip_first is None else int(skip_first),
        iteration,
        None if nsys_format is None else str(nsys_format),
    )


def _output(df, output):
    if output == "pandas":
        return df
    if output == "arrow":
        try:
            import pyarrow
        except ImportError as e:
            raise SightlineError("output='arrow' needs pyarrow (pip install pyarrow)") from e
        return pyarrow.Table.from_pandas(df, preserve_index=False)
    raise SightlineError(f"output takes 'pandas' or 'arrow' (got {output!r})")
