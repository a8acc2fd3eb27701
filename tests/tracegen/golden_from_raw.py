"""Files the raw `nsys stats` / `nsys analyze` output that run_nccl_device.sh brings back as a golden folder
in the form of ../shared/traces/golden-2025.3/: `<report>.csv` / `analyze.<rule>.csv` where nsys printed a
table, `<name>.skipped` where it printed none (its SKIPPED reason, or "no findings" for a rule).
usage: python3 golden_from_raw.py RAW_DIR OUT_DIR   (RAW_DIR/<trace>/<name>.out|.err)"""
import os, sys

raw, out = sys.argv[1], sys.argv[2]
for trace in sorted(os.listdir(raw)):
    os.makedirs(f"{out}/{trace}", exist_ok=True)
    for f in sorted(os.listdir(f"{raw}/{trace}")):
        if not f.endswith(".out"):
            continue
        name = f[:-4]
        text = open(f"{raw}/{trace}/{f}", encoding="utf-8").read().replace("\r\n", "\n")
        lines = [l for l in text.split("\n") if not l.startswith("Processing [")]
        body = "\n".join(lines).strip()
        if body and not body.startswith("SKIPPED:"):
            open(f"{out}/{trace}/{name}.csv", "w", encoding="utf-8").write(body + "\n")
        elif name.startswith("analyze."):
            open(f"{out}/{trace}/{name}.skipped", "w").write("no findings\n")
        else:
            open(f"{out}/{trace}/{name}.skipped", "w").write(
                "nsys printed nothing (does not contain such data): the right output is empty\n")
