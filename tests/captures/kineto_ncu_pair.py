"""One PyTorch program captured twice, as users do: by torch.profiler (a Kineto Chrome trace) and by
Nsight Compute (`ncu`), to join the profiled kernels to the PyTorch timeline.

    python3 kineto_ncu_pair.py OUT.pt.trace.json      # the Kineto trace of the captured steps
    UNDER_NCU=1 ncu --nvtx --nvtx-include "captured/" -o OUT python3 kineto_ncu_pair.py -

The model and the steps are the same in both runs; set-up and warm-up run outside both captures,
the captured steps inside an NVTX range `captured` (what ncu profiles) or torch.profiler (what
Kineto records). Made for Sightline's tests (tests/ncu_join_pytorch.rs).
"""
import os
import sys

import torch
import torch.nn as nn

out = sys.argv[1]
under_ncu = os.environ.get("UNDER_NCU") == "1"
torch.manual_seed(0)
dev = "cuda"
layer = nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, batch_first=True).to(dev)
head = nn.Linear(256, 10).to(dev)
params = list(layer.parameters()) + list(head.parameters())
opt = torch.optim.AdamW(params, lr=1e-3)
x = torch.randn(16, 64, 256, device=dev)
target = torch.randint(0, 10, (16,), device=dev)


def step():
    h = layer(x)
    logits = head(h.mean(dim=1))
    loss = nn.functional.cross_entropy(logits, target)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


for _ in range(3):  # warm-up: outside both captures
    step()
torch.cuda.synchronize()

STEPS = 2
if under_ncu:
    torch.cuda.nvtx.range_push("captured")
    for _ in range(STEPS):
        step()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
else:
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(STEPS):
            step()
        torch.cuda.synchronize()
    prof.export_chrome_trace(out)
    print(f"wrote {out}")
