// Kernels for how Nsight Compute 2025 prints a namespace that every kernel name of the report
// uses (seen on public reports: `at::`, `cutlass::`, `Kokkos::`, `T1::`, an ABI tag's `abi:`
// gone from every name, `at::<unnamed>::` printed `unnamed>::`, `const::[lambda` printed
// `lambda`). Built twice by run_ncu_names_common_device.sh: as it is (every kernel in `common`)
// and with -DWITH_C_KERNEL (one extern "C" kernel more, whose name uses no namespace).
#include <cstdio>
namespace common {
template <typename T> struct Box { T t; };
struct Tag { int x; };
namespace inner { __global__ void k2(Tag t) {} }
namespace { __global__ void k3() {} }
__global__ void k1(Box<int> b) {}
__global__ void __attribute__((abi_tag("tg"))) tagged() {}
template <typename F> __global__ void apply(F f) { f(); }
struct Op { __device__ void operator()() const {} };
}
#ifdef WITH_C_KERNEL
extern "C" __global__ void plain_c_kernel() {}
#endif
int main() {
  common::k1<<<1, 1>>>(common::Box<int>{});
  common::inner::k2<<<1, 1>>>(common::Tag{});
  common::k3<<<1, 1>>>();
  common::tagged<<<1, 1>>>();
  common::apply<<<1, 1>>>(common::Op{});
#ifdef WITH_C_KERNEL
  plain_c_kernel<<<1, 1>>>();
#endif
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
