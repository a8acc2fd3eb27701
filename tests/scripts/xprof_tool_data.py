"""XProf's own tool data for one XPlane, each tool converted on a clean copy of the file (XProf
caches conversions beside the XPlane, `ALL_HOSTS.op_stats_v2.pb`, and a later tool reuses them,
which changes what `overview_page` lists).
Writes OUT/TOOL.json for each TOOL, and prints one JSON line per tool:
{"tool": TOOL, "seconds": wall time of the conversion, "bytes": size of its answer}.
usage: python xprof_tool_data.py XPLANE OUT TOOL..."""
import json
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
from xprof.convert import raw_to_tool_data  # noqa: E402

src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
for tool in sys.argv[3:]:
    folder = tempfile.mkdtemp(prefix="xprof_clean_")
    copy = os.path.join(folder, os.path.basename(src))
    shutil.copyfile(src, copy)
    started = time.perf_counter()
    data, _content_type = raw_to_tool_data.xspace_to_tool_data([copy], tool, {})
    seconds = time.perf_counter() - started
    shutil.rmtree(folder)
    if data is None:
        print(json.dumps({"tool": tool, "error": "XProf gave no data"}), flush=True)
        continue
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(out, tool + ".json"), "wb") as f:
        f.write(data)
    print(json.dumps({"tool": tool, "seconds": seconds, "bytes": len(data)}), flush=True)
