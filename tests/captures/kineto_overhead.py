"""A PyTorch program whose profile holds Kineto's own overhead events (`"cat": "overhead"`:
CUPTI's `Activity Buffer Request` and `Buffer Flush`), and PyTorch's own key_averages() of it.

    python3 kineto_overhead.py TAG STEPS INNER      # in the folder that gets the files

The `many` workload of ../../../shared/tracegen/kineto_workloads.py (a step `iteration_N` of INNER
rounds of `relu(y * 1.0001 + 0.001)` on a 256x256 CUDA tensor, then `y.sum().item()`) under the
same profiler settings (schedule wait 1 / warmup 1 / active STEPS-2, record_shapes, profile_memory,
with_stack), written as kineto_workloads.py writes it: TAG.pt.trace.json.gz and
TAG.key_averages.csv / TAG.key_averages_shapes.csv in the golden files' columns, plus
TAG.diag.txt: for each overhead event (and each `iteration_1*` range) its thread, span, parent,
memory and children in PyTorch's own event tree, to read how PyTorch nests them. Written compact
because the device call that ran it passes the program inline (2,000 characters at most);
run_kineto_overhead_device.sh is that call's command. Made for Sightline's tests
(tests/fixtures/kineto_overhead/, tests/kineto_overhead.rs, tests/torch_ops.rs).
"""
import csv,os,sys,torch
from torch.profiler import profile,schedule,ProfilerActivity as A,record_function as rf
tag,steps,inner=sys.argv[1],int(sys.argv[2]),int(sys.argv[3])
C=["key","count","self_cpu_time_total","cpu_time_total","self_device_time_total","device_time_total","self_cpu_memory_usage","cpu_memory_usage","self_device_memory_usage","device_memory_usage"]
O=("Activity Buffer Request","Buffer Flush")
def dump(p):
 j=tag+".pt.trace.json";p.export_chrome_trace(j);os.system("gzip -6 "+j)
 for s,k in(("key_averages",{}),("key_averages_shapes",{"group_by_input_shape":True})):
  with open(f"{tag}.{s}.csv","w",newline="") as f:
   w=csv.writer(f);w.writerow(C+(["input_shapes"] if k else[]))
   for e in p.key_averages(**k):w.writerow([getattr(e,c,"") for c in C]+([str(e.input_shapes)] if k else[]))
 with open(tag+".diag.txt","w") as f:
  f.write(torch.__version__+"\n")
  for e in p.events():
   if e.name in O or e.name.startswith("iteration_1"):
    q=e.cpu_parent;f.write(f"{e.name}|{e.thread}|{e.time_range.start}|{e.time_range.end}|{q and q.name}|{q and q.time_range.start}|{e.cpu_memory_usage}|{e.device_memory_usage}|{[c.name for c in e.cpu_children]}\n")
x=torch.randn(256,256,device="cuda")
def step(i):
 with rf(f"iteration_{i}"):
  y=x
  for _ in range(inner):y=torch.relu(y*1.0001+0.001)
  y.sum().item()
with profile(activities=[A.CPU,A.CUDA],schedule=schedule(wait=1,warmup=1,active=steps-2,repeat=1),on_trace_ready=dump,record_shapes=True,profile_memory=True,with_stack=True) as p:
 for i in range(steps):step(i);p.step()
print(tag,"done",flush=True)
