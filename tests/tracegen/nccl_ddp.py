"""Data-parallel training over NCCL, one process per GPU:
    torchrun --standalone --nproc_per_node=N nccl_ddp.py [--slow-rank R] [--steps S] [--profiler OUTDIR]
An 8-layer MLP (33.6 M parameters) under DistributedDataParallel: its gradient all-reduces (NCCL kernels,
25 MB buckets) overlap the backward pass; the loss is all-reduced for logging after the optimizer step.
`--slow-rank R` gives rank R extra compute before its backward pass, so every other rank waits in the
gradient all-reduces (a straggler to find). Ranges: warmup / step_N > forward, extra_compute, backward,
optimizer, log_loss (NVTX under nsys, record_function under --profiler, which writes
kt_ddp_rankR.pt.trace.json.gz and PyTorch's key_averages() beside it)."""
import argparse
import torch, torch.nn as nn
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from nccl_common import init, ranges, run_steps, finished

ap = argparse.ArgumentParser()
ap.add_argument("--slow-rank", type=int, default=-1)
ap.add_argument("--steps", type=int, default=10)
ap.add_argument("--profiler", default="")
args = ap.parse_args()
rank, world = init()
rng = ranges(bool(args.profiler))
torch.manual_seed(0)
D = 2048
model = DDP(nn.Sequential(*[nn.Sequential(nn.Linear(D, D), nn.GELU()) for _ in range(8)]).cuda())
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
torch.manual_seed(rank)
x = torch.randn(512, D, device="cuda")
extra = torch.randn(4096, 4096, device="cuda")


def step(i):
    with rng("warmup" if i < 2 else f"step_{i - 2}"):
        with rng("forward"):
            loss = model(x).float().pow(2).mean()
        if rank == args.slow_rank:
            with rng("extra_compute"):
                y = extra
                for _ in range(24):
                    y = torch.tanh(y @ extra * 1e-3)
        with rng("backward"):
            loss.backward()
        with rng("optimizer"):
            opt.step()
            opt.zero_grad(set_to_none=True)
        with rng("log_loss"):
            t = loss.detach().clone()
            dist.all_reduce(t)
            t.item()


with finished():
    run_steps(step, args.steps, args.profiler, f"kt_ddp{'' if world == 2 else f'_{world}gpu'}_rank{rank}")
print("rank", rank, "of", world, "done", flush=True)
