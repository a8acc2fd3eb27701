"""Shared by the NCCL workloads: one process per GPU under torchrun, ranges that are NVTX under nsys and
record_function under torch.profiler, and the profiler's dump (trace + PyTorch's own key_averages())."""
import contextlib, csv, gzip, os, shutil
import torch
import torch.distributed as dist
from torch.profiler import profile, schedule, ProfilerActivity, record_function

# NVLink multicast stays off on the shared GPU machines (see the device tool's notes).
for k, v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ[k] = v

COLS = ["key", "count", "self_cpu_time_total", "cpu_time_total", "self_device_time_total", "device_time_total",
        "self_cpu_memory_usage", "cpu_memory_usage", "self_device_memory_usage", "device_memory_usage"]


def init():
    rank, local, world = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    return rank, world


def ranges(profiler):
    """A named range: `record_function` under torch.profiler, NVTX push/pop under nsys."""
    if profiler:
        return record_function
    return lambda name: torch.cuda.nvtx.range(name)


def dump(prof, out, tag):
    path = f"{out}/{tag}.pt.trace.json"
    prof.export_chrome_trace(path)
    with open(path, "rb") as f, gzip.open(path + ".gz", "wb", compresslevel=6) as g:
        shutil.copyfileobj(f, g)
    os.unlink(path)
    for suffix, kw in (("key_averages", {}), ("key_averages_shapes", {"group_by_input_shape": True})):
        with open(f"{out}/{tag}.{suffix}.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(COLS + (["input_shapes"] if kw else []))
            for e in prof.key_averages(**kw):
                row = [getattr(e, c, "") for c in COLS]
                w.writerow(row + ([str(e.input_shapes)] if kw else []))
    print(tag, "written", os.path.getsize(path + ".gz"), "bytes gz", flush=True)


def run_steps(body, steps, profiler_out, tag):
    """Runs `body(i)` for each step; under torch.profiler (schedule wait 1 / warmup 1 / active rest,
    record_shapes, profile_memory, with_stack) when `profiler_out` names a folder."""
    if not profiler_out:
        for i in range(steps):
            body(i)
        torch.cuda.synchronize()
        return
    os.makedirs(profiler_out, exist_ok=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=1, warmup=1, active=steps - 2, repeat=1),
                 on_trace_ready=lambda p: dump(p, profiler_out, tag),
                 record_shapes=True, profile_memory=True, with_stack=True) as prof:
        for i in range(steps):
            body(i)
            prof.step()
    torch.cuda.synchronize()


@contextlib.contextmanager
def finished():
    try:
        yield
    finally:
        dist.barrier()
        dist.destroy_process_group()
