"""Reads every Parquet table of a folder of Sightline digests with pyarrow (an independent
reader) and prints them as JSON: {rank folder: {table: {column: [values]}}}."""
import json
import pathlib
import sys

import pyarrow.parquet as pq

root = pathlib.Path(sys.argv[1])
out = {}
for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
    tables = {}
    for f in sorted(folder.glob("*.parquet")):
        tables[f.stem] = pq.read_table(f).to_pydict()
    out[folder.name] = tables
json.dump(out, sys.stdout)
