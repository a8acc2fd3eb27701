// Kernels whose demangled names tell apart the candidate rules for how Nsight Compute 2025
// simplifies kernel names on its pages (`--rename-kernels 1`, the default): runs of namespaces
// where two always come together (at::native), where one is used by more kernel names than the
// other, where a namespace appears only inside a template argument, an anonymous namespace, an
// inline namespace, and one kernel launched ten times. Built and profiled on the GPU machine by
// run_ncu_names_device.sh; the report and ncu's pages of it are tests/fixtures/ncu_names/.
#include <cstdio>
namespace at { namespace native {
template <typename T> struct ReduceOp { T t; };
struct FillFunctor { int v; };
namespace detail { struct Lim { int x; }; }
template <int N, typename F> __global__ void reduce_kernel(F f) {}
template <int N, typename F> __global__ void vec_kernel(F f, detail::Lim l) {}
namespace { struct Anon { int a; }; template <typename T> __global__ void anon_kernel(T t) {} }
}}
namespace cublasLt { namespace epilogue { namespace impl { template <int A> __global__ void globalKernel(int x) {} }}}
namespace a1 { namespace b1 { namespace c1 { __global__ void k3() {} } __global__ void k2() {} } __global__ void k1() {} }
namespace thrust { inline namespace THRUST_NS { template <typename T> struct counting_iterator { T t; }; } }
namespace outer { namespace inner { template <typename T> __global__ void tk(T t) {} } }
namespace p { namespace q { namespace r { namespace s { struct Deep { int d; }; template <typename T> __global__ void deep(T t) {} }}}}
// A: distinct names vs instances
namespace xa { namespace ya { __global__ void f1() {} } __global__ void h1() {} }
namespace ya { __global__ void g1() {} __global__ void g2() {} }
// B: occurrences inside one name vs distinct names
namespace mb { namespace nb { struct A{}; struct B{}; struct C{}; template <typename P, typename Q, typename R> __global__ void k(P p, Q q, R r) {} } __global__ void z() {} __global__ void zz() {} }
// C: does a namespace used only in a template argument count?
namespace uc { namespace vc { __global__ void fc() {} } struct T{}; }
namespace wc { template <typename X> __global__ void fd(X x) {} }
// D: unnamed after the chosen component
namespace da { namespace { namespace db { __global__ void fk() {} } } __global__ void other() {} }
// E: a namespace used by one name four times against one used by two names once each
namespace ga { struct T1{}; struct T2{}; struct T3{}; namespace gb { template <typename A, typename B, typename C> __global__ void gk(A a, B b, C c) {} } }
namespace gb { __global__ void solo() {} }
int main() {
  at::native::reduce_kernel<512><<<1,1>>>(at::native::ReduceOp<float>{});
  at::native::vec_kernel<4><<<1,1>>>(at::native::FillFunctor{}, at::native::detail::Lim{});
  at::native::vec_kernel<4><<<1,1>>>(at::native::Anon{}, at::native::detail::Lim{});
  at::native::anon_kernel<<<1,1>>>(at::native::Anon{});
  cublasLt::epilogue::impl::globalKernel<8><<<1,1>>>(1);
  a1::k1<<<1,1>>>(); a1::b1::k2<<<1,1>>>(); a1::b1::c1::k3<<<1,1>>>();
  outer::inner::tk<<<1,1>>>(thrust::counting_iterator<long>{});
  outer::inner::tk<<<1,1>>>(at::native::ReduceOp<long>{});
  outer::inner::tk<<<1,1>>>(p::q::r::s::Deep{});
  p::q::r::s::deep<<<1,1>>>(p::q::r::s::Deep{});
  p::q::r::s::deep<<<1,1>>>(at::native::ReduceOp<p::q::r::s::Deep>{});

  xa::ya::f1<<<1,1>>>(); for (int i = 0; i < 10; i++) xa::h1<<<1,1>>>(); ya::g1<<<1,1>>>(); ya::g2<<<1,1>>>();
  mb::nb::k<<<1,1>>>(mb::nb::A{}, mb::nb::B{}, mb::nb::C{}); mb::z<<<1,1>>>(); mb::zz<<<1,1>>>();
  uc::vc::fc<<<1,1>>>(); wc::fd<<<1,1>>>(uc::T{});
  da::db::fk<<<1,1>>>(); da::other<<<1,1>>>();
  ga::gb::gk<<<1,1>>>(ga::T1{}, ga::T2{}, ga::T3{}); gb::solo<<<1,1>>>();
  cudaDeviceSynchronize();
  printf("ok\n");
  return 0;
}
