//! The kernels of the inference shape's model, with names as an H100 run of vLLM on PyTorch 2.11
//! and CUDA 13 shows them (cuBLAS's `nvjet` GEMMs, vLLM's and PyTorch's own kernels, Triton
//! kernels), and their duration ranges: a few µs, tens of µs for the larger GEMMs.

/// A kernel of the model: demangled, short and mangled name, and its duration range (ns).
pub(super) type KernelSpec = (&'static str, &'static str, &'static str, i64, i64);

pub(super) const RMS_NORM: usize = 0;
pub(super) const ADD_RMS_NORM: usize = 1;
pub(super) const GEMM_QKV: usize = 2;
pub(super) const GEMM_SPLIT_K: usize = 3;
pub(super) const SPLIT_K_REDUCE: usize = 4;
pub(super) const ROTARY: usize = 5;
pub(super) const RESHAPE_CACHE: usize = 6;
pub(super) const FLASH_FWD: usize = 7;
pub(super) const FLASH_COMBINE: usize = 8;
pub(super) const SILU_AND_MUL: usize = 9;
pub(super) const GEMM_MLP: usize = 10;
pub(super) const TRITON_ADD: usize = 11;
pub(super) const FILL: usize = 12;
pub(super) const INDEX: usize = 13;
pub(super) const SOFTMAX: usize = 14;
pub(super) const TOP_K: usize = 15;
pub(super) const ARGMAX: usize = 16;
pub(super) const TEMPERATURE: usize = 17;
pub(super) const EMBED: usize = 18;
pub(super) const COPY: usize = 19;
pub(super) const LM_HEAD: usize = 20;

pub(super) const KERNELS: [KernelSpec; 21] = [
    (
        "void vllm::rms_norm_kernel<c10::BFloat16, 8, 4>(c10::BFloat16*, c10::BFloat16 const*, long, c10::BFloat16 const*, float, int, int)",
        "rms_norm_kernel",
        "_ZN4vllm15rms_norm_kernelIN3c108BFloat16ELi8ELi4EEEvPT_PKS3_lS6_fii",
        1_800,
        3_500,
    ),
    (
        "void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16*, c10::BFloat16 const*, float, int, int)",
        "fused_add_rms_norm_kernel",
        "_ZN4vllm25fused_add_rms_norm_kernelIN3c108BFloat16ELi8EEEvPT_lS4_PKS3_fii",
        2_000,
        4_000,
    ),
    (
        "nvjet_tst_128x64_64x8_1x1_v_bz_TNT",
        "nvjet_tst_128x64_64x8_1x1_v_bz_TNT",
        "nvjet_tst_128x64_64x8_1x1_v_bz_TNT",
        4_000,
        14_000,
    ),
    (
        "nvjet_tst_64x32_64x16_4x1_v_bz_splitK_TNT",
        "nvjet_tst_64x32_64x16_4x1_v_bz_splitK_TNT",
        "nvjet_tst_64x32_64x16_4x1_v_bz_splitK_TNT",
        3_000,
        9_000,
    ),
    (
        "void cublasLt::splitKreduce_kernel<32, 16, int, __nv_bfloat16, __nv_bfloat16, float, __nv_bfloat16, false, false, false>(cublasLt::cublasSplitKParams<float>, __nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, float const*, float const*, __nv_bfloat16 const*, long, float*, int*)",
        "splitKreduce_kernel",
        "_ZN8cublasLt19splitKreduce_kernelILi32ELi16Ei13__nv_bfloat16S1_fS1_Lb0ELb0ELb0EEEvNS_18cublasSplitKParamsIT4_EEPKT2_SA_PT3_PKS6_SF_PKT5_lPS6_Pi",
        1_500,
        3_000,
    ),
    (
        "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)",
        "rotary_embedding_kernel",
        "_ZN4vllm23rotary_embedding_kernelIN3c108BFloat16ELb1EEEvPKlPT_S6_PKS5_illliii",
        1_800,
        3_200,
    ),
    (
        "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, __nv_bfloat16*, long const*, long, long, long, long, int, int, int, float const*, float const*)",
        "reshape_and_cache_flash_kernel",
        "_ZN4vllm30reshape_and_cache_flash_kernelI13__nv_bfloat16S1_LNS_18Fp8KVCacheDataTypeE0EEEvPKT_S6_PT0_S8_PKllllliiiPKfSC_",
        1_600,
        3_000,
    ),
    (
        "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(Flash_fwd_params)",
        "flash_fwd_splitkv_kernel",
        "_ZN5flash24flash_fwd_splitkv_kernelI23Flash_fwd_kernel_traitsILi128ELi64ELi128ELi4ELb0ELb0EN7cutlass10bfloat16_tE19Flash_kernel_traitsILi128ELi64ELi128ELi4ES3_EELb0ELb1ELb0ELb0ELb1ELb1ELb0ELb0EEEv16Flash_fwd_params",
        4_000,
        20_000,
    ),
    (
        "void flash::flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, 4, 3, true>(Flash_fwd_params)",
        "flash_fwd_splitkv_combine_kernel",
        "_ZN5flash32flash_fwd_splitkv_combine_kernelI23Flash_fwd_kernel_traitsILi128ELi64ELi128ELi4ELb0ELb0EN7cutlass10bfloat16_tE19Flash_kernel_traitsILi128ELi64ELi128ELi4ES3_EELi4ELi3ELb1EEEv16Flash_fwd_params",
        1_500,
        3_000,
    ),
    (
        "void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, true>(c10::BFloat16*, c10::BFloat16 const*, int)",
        "act_and_mul_kernel",
        "_ZN4vllm18act_and_mul_kernelIN3c108BFloat16EXadL_ZNS_11silu_kernelIS2_EET_RKS4_EELb1EEEvPS4_PS5_i",
        1_800,
        4_000,
    ),
    (
        "nvjet_tst_256x128_64x4_2x1_v_bz_coopA_TNT",
        "nvjet_tst_256x128_64x4_2x1_v_bz_coopA_TNT",
        "nvjet_tst_256x128_64x4_2x1_v_bz_coopA_TNT",
        6_000,
        24_000,
    ),
    (
        "triton_poi_fused_add_0",
        "triton_poi_fused_add_0",
        "triton_poi_fused_add_0",
        1_500,
        2_500,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<long>, std::array<char*, 1ul> >(int, at::native::FillFunctor<long>, std::array<char*, 1ul>)",
        "vectorized_elementwise_kernel",
        "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIlEESt5arrayIPcLm1EEEEviT0_T1_",
        1_200,
        2_000,
    ),
    (
        "void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<8> > > >(long, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<8> > >)",
        "index_elementwise_kernel",
        "_ZN2at6native24index_elementwise_kernelILi128ELi4ENS0_16gpu_index_kernelINS0_17index_kernel_implINS0_10OpaqueTypeILi8EEEEEEEEEvlT1_",
        1_500,
        3_000,
    ),
    (
        "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
        "cunn_SoftMaxForward",
        "_ZN2at6native12_GLOBAL__N_119cunn_SoftMaxForwardILi4EfffNS1_22SoftMaxForwardEpilogueEEEvPT2_PKT0_i",
        2_500,
        6_000,
    ),
    (
        "void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(at::cuda::detail::TensorInfo<float, unsigned int>, unsigned int, unsigned int, bool, unsigned int, unsigned int, at::cuda::detail::TensorInfo<float, unsigned int>, unsigned int, at::cuda::detail::TensorInfo<long, unsigned int>, unsigned int, unsigned int*)",
        "gatherTopK",
        "_ZN2at6native6sbtopk10gatherTopKIfjLi2ELb0EEEvNS_4cuda6detail10TensorInfoIT_T0_EES7_S7_bS7_S7_S8_S7_NS5_IlS7_EES7_PS7_",
        3_000,
        8_000,
    ),
    (
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4> >(at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4>)",
        "reduce_kernel",
        "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_9ArgMaxOpsIfEEjlLi4EEEEEvT1_",
        2_000,
        4_000,
    ),
    (
        "triton_poi_fused_div_0",
        "triton_poi_fused_div_0",
        "triton_poi_fused_div_0",
        1_300,
        2_200,
    ),
    (
        "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)",
        "indexSelectLargeIndex",
        "_ZN2at6native12_GLOBAL__N_121indexSelectLargeIndexIN3c108BFloat16EljLi2ELi2ELin2ELb1EEEvNS_4cuda6detail10TensorInfoIT_T1_EENS7_IKS8_S9_EENS7_IKT0_S9_EEiiS9_S9_l",
        2_000,
        4_000,
    ),
    (
        "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)",
        "unrolled_elementwise_kernel",
        "_ZN2at6native27unrolled_elementwise_kernelIZZZNS0_23direct_copy_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE1_clEvENKUlvE6_clEvEUlfE_St5arrayIPcLm2EELi4E23TrivialOffsetCalculatorILi1EjESC_NS0_6memory12LoadWithCastILi1EEENSD_13StoreWithCastILi1EEEEEviT_T0_T2_T3_T4_T5_",
        1_300,
        2_500,
    ),
    (
        "nvjet_tst_192x128_64x5_1x2_h_bz_coopB_NNT",
        "nvjet_tst_192x128_64x5_1x2_h_bz_coopB_NNT",
        "nvjet_tst_192x128_64x5_1x2_h_bz_coopB_NNT",
        15_000,
        40_000,
    ),
];
