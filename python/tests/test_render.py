"""``Trace.render`` against ``sightline render`` (the same PNG and SVG bytes for the same
options), and ``sightline.show``: the window in a process of its own, on a virtual X display
(Xvfb, which CI installs), and the window's own words when there is no display."""

import os
import shutil
import subprocess
import time

import pytest

import sightline
from conftest import FIXTURES, count, fixture_pytorch, run_cli

CASES = [
    (FIXTURES / "moe.sqlite", {}, []),
    (
        FIXTURES / "moe.sqlite",
        {"start": "600ms", "end": "620ms", "rows": "Stream|CUDA API", "theme": "light", "width": 900, "height": 500},
        ["--range", "600ms:620ms", "--rows", "Stream|CUDA API", "--theme", "light", "--width", "900", "--height", "500"],
    ),
    (FIXTURES / "cpu_side.sqlite", {"range": "gpu", "colour_blind": True}, ["--range", "gpu", "--colour-blind"]),
    (
        FIXTURES / "moe.sqlite",
        {"sql_tracks": ["select start, end, name from kernels where name like '%gemm%'"]},
        ["--sql-track", "select start, end, name from kernels where name like '%gemm%'"],
    ),
]
CASES += [(p, {"critical_path": 0}, ["--critical-path", "0"]) for p in fixture_pytorch()[:1]]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0].name}:{','.join(c[2])}")
@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_render_equals_the_command_line(case, suffix, tmp_path):
    path, keywords, flags = case
    theirs = tmp_path / f"cli{suffix}"
    run_cli("render", path, "--out", theirs, *flags)
    ours = tmp_path / f"py{suffix}"
    image = sightline.open(path).render(ours, **keywords)
    assert ours.read_bytes() == theirs.read_bytes(), f"{path.name} {flags}: not the command's picture"
    assert image.data == ours.read_bytes()
    if suffix == ".png":
        assert image.data.startswith(b"\x89PNG") and image._repr_png_() == image.data
        # Without a path: the same picture, in memory only.
        assert sightline.open(path).render(**keywords).data == image.data
    count("pictures compared")


def test_render_errors_are_the_command_lines():
    t = sightline.open(FIXTURES / "moe.sqlite")
    with pytest.raises(sightline.SightlineError, match="--rows '\\(' is not a valid regex"):
        t.render(rows="(")
    with pytest.raises(sightline.SightlineError, match="theme takes"):
        t.render(theme="blue")
    with pytest.raises(sightline.SightlineError, match="--critical-path 99"):
        t.render(critical_path=99)


def test_show_without_a_display_says_so(monkeypatch):
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    # wait=True: the window process's end is awaited, not the two seconds `show` gives a window
    # that cannot open (a busy machine can take longer to start it).
    with pytest.raises(sightline.SightlineError) as raised:
        sightline.show(FIXTURES / "moe.sqlite", wait=True)
    said = str(raised.value)
    assert said and "Traceback" not in said, said
    count("windows refused without a display")


def _xvfb():
    """A private virtual X display: (process, its name)."""
    xvfb = shutil.which("Xvfb")
    assert xvfb, "Xvfb is needed to test the window (apt-get install xvfb; .ci/run installs it)"
    for n in range(140, 160):
        if not os.path.exists(f"/tmp/.X11-unix/X{n}") and not os.path.exists(f"/tmp/.X{n}-lock"):
            process = subprocess.Popen([xvfb, f":{n}", "-screen", "0", "1600x1000x24", "-nolisten", "tcp"])
            for _ in range(100):
                if os.path.exists(f"/tmp/.X11-unix/X{n}"):
                    return process, f":{n}"
                time.sleep(0.05)
            process.kill()
    raise AssertionError("no free X display number for Xvfb")


def _window_titles(display):
    """The names of the display's top-level windows (xwininfo, from x11-utils)."""
    done = subprocess.run(
        ["xwininfo", "-root", "-tree"], capture_output=True, env={**os.environ, "DISPLAY": display}
    )
    return done.stdout.decode(errors="replace")


def test_show_opens_the_window_in_its_own_process(monkeypatch):
    xvfb, display = _xvfb()
    try:
        monkeypatch.setenv("DISPLAY", display)
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        t = sightline.open(FIXTURES / "moe.sqlite")
        process = t.show()
        assert process.pid != os.getpid()
        deadline, tree = time.monotonic() + 60, ""
        while time.monotonic() < deadline and "moe.sqlite" not in tree:
            assert process.poll() is None, "the window's process ended"
            time.sleep(0.25)
            tree = _window_titles(display)
        assert "moe.sqlite" in tree, f"no window titled with the trace on {display}:\n{tree}"
        # The notebook goes on while the window is open.
        assert len(t.sql("select * from kernels")) > 0
        process.terminate()
        process.wait(timeout=10)
        count("windows opened")
    finally:
        xvfb.kill()
        xvfb.wait()
