"""Expert parallelism over NCCL, one process per GPU:
    torchrun --standalone --nproc_per_node=N nccl_moe_a2a.py [--hot-rank R] [--steps S] [--profiler OUTDIR]
Each rank holds 4 experts (a 1024 -> 4096 -> 1024 MLP each) and 8192 tokens per step. A router picks one
expert per token; tokens travel to the expert's rank and back with all-to-all (counts first, then the
tokens and their expert ids: `all_to_all_single`). `--hot-rank R` biases the router towards rank R's
experts, so R gets about three times the tokens of the others and every other rank waits for it in the
combine all-to-all (load imbalance across experts). Ranges: moe_warmup / moe_step_N > route, dispatch,
experts > Expert_E, combine (NVTX under nsys, record_function under --profiler)."""
import argparse
import torch, torch.nn as nn
import torch.distributed as dist
from nccl_common import init, ranges, run_steps, finished

ap = argparse.ArgumentParser()
ap.add_argument("--hot-rank", type=int, default=-1)
ap.add_argument("--steps", type=int, default=10)
ap.add_argument("--profiler", default="")
args = ap.parse_args()
rank, world = init()
rng = ranges(bool(args.profiler))
EPR, D, H, TOK = 4, 1024, 4096, 8192
torch.manual_seed(0)
router = nn.Linear(D, EPR * world).cuda()
with torch.no_grad():
    if args.hot_rank >= 0:
        router.bias[args.hot_rank * EPR:(args.hot_rank + 1) * EPR] += 1.5
experts = [nn.Sequential(nn.Linear(D, H), nn.GELU(), nn.Linear(H, D)).cuda() for _ in range(EPR)]
torch.manual_seed(rank)
x = torch.randn(TOK, D, device="cuda")


@torch.no_grad()
def step(i):
    with rng("moe_warmup" if i < 2 else f"moe_step_{i - 2}"):
        with rng("route"):
            choice = router(x).argmax(dim=1)
            order = torch.argsort(choice)
            xs, cs = x[order], choice[order]
            send = torch.bincount(cs // EPR, minlength=world)
        with rng("dispatch"):
            recv = torch.empty_like(send)
            dist.all_to_all_single(recv, send)
            send_l, recv_l = send.tolist(), recv.tolist()
            rx = x.new_empty(sum(recv_l), D)
            dist.all_to_all_single(rx, xs, recv_l, send_l)
            rid = cs.new_empty(sum(recv_l))
            dist.all_to_all_single(rid, cs, recv_l, send_l)
        with rng("experts"):
            out = torch.empty_like(rx)
            for e in range(EPR):
                with rng(f"Expert_{rank * EPR + e}"):
                    sel = (rid == rank * EPR + e).nonzero(as_tuple=True)[0]
                    out[sel] = experts[e](rx[sel])
        with rng("combine"):
            back = torch.empty_like(xs)
            dist.all_to_all_single(back, out, send_l, recv_l)
            y = torch.empty_like(x)
            y[order] = back
        torch.cuda.synchronize()


with finished():
    run_steps(step, args.steps, args.profiler, f"kt_moe_a2a{'' if world == 2 else f'_{world}gpu'}_rank{rank}")
print("rank", rank, "of", world, "done", flush=True)
