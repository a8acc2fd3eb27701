//! The GPU's published peaks by data type, for the roofline: which GPU the trace ran on (its
//! `deviceProperties`: name, SM count, compute capability) and the vendors' datasheet figures.
//!
//! Figures are dense (no structured sparsity), at boost clock, TFLOP/s and TB/s, from:
//! - H100 SXM5 / PCIe / NVL: NVIDIA H100 Tensor Core GPU datasheet
//!   (<https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet>); the
//!   sheet prints tensor figures "with sparsity", halved here.
//! - H200 SXM / NVL: NVIDIA H200 Tensor Core GPU datasheet
//!   (<https://www.nvidia.com/en-us/data-center/h200/>), sparse figures halved.
//! - A100 SXM4 / PCIe 40 GB and 80 GB: NVIDIA A100 Tensor Core GPU datasheet
//!   (<https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf>).
//! - B200: NVIDIA HGX B200 specifications (<https://www.nvidia.com/en-us/data-center/hgx/>),
//!   eight GPUs' sparse figures divided by 8 and halved; 64 TB/s / 8.
//! - L40S: NVIDIA L40S datasheet (<https://www.nvidia.com/en-us/data-center/l40s/>), sparse
//!   figures halved.
//! - MI300X, MI325X: AMD Instinct MI300X and MI325X datasheets
//!   (<https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html>,
//!   <https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html>), dense matrix
//!   figures; FP32 vector 81.7, FP32 matrix 163.4.
//!
//! Matrix work in `float` runs on NVIDIA's CUDA cores unless TF32 is allowed (not PyTorch's
//! default for matmul): the FP32 figure applies (AMD's FP32 matrix figure on Instinct), the TF32
//! one where the kernel's name says `tf32`. Vector
//! work (elementwise, reductions, norms) has the FP32 vector figure whatever its data type.

use super::models::Unit;
use crate::trace::{GpuInfo, Trace};

/// One GPU's datasheet figures: TFLOP/s dense, and HBM TB/s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuSpec {
    pub name: &'static str,
    /// FP32 on the vector units (CUDA cores).
    pub fp32: f64,
    /// FP32 matrix work without TF32: CUDA cores on NVIDIA (= `fp32`), matrix cores on AMD.
    pub fp32_matrix: f64,
    pub tf32: f64,
    pub bf16: f64,
    pub fp8: Option<f64>,
    pub tb_per_s: f64,
}

const fn spec(
    name: &'static str,
    fp32: f64,
    tf32: f64,
    bf16: f64,
    fp8: Option<f64>,
    tb_per_s: f64,
) -> GpuSpec {
    GpuSpec {
        name,
        fp32,
        fp32_matrix: fp32,
        tf32,
        bf16,
        fp8,
        tb_per_s,
    }
}

pub const H100_SXM: GpuSpec = spec("H100 SXM", 67.0, 494.5, 989.5, Some(1979.0), 3.35);
pub const H100_PCIE: GpuSpec = spec("H100 PCIe", 51.0, 378.0, 756.5, Some(1513.0), 2.0);
pub const H100_NVL: GpuSpec = spec("H100 NVL", 60.0, 417.5, 835.5, Some(1670.5), 3.9);
pub const H200_SXM: GpuSpec = spec("H200 SXM", 67.0, 494.5, 989.5, Some(1979.0), 4.8);
pub const H200_NVL: GpuSpec = spec("H200 NVL", 60.0, 417.5, 835.5, Some(1670.5), 4.8);
pub const A100_SXM_80: GpuSpec = spec("A100 SXM4 80GB", 19.5, 156.0, 312.0, None, 2.039);
pub const A100_SXM_40: GpuSpec = spec("A100 SXM4 40GB", 19.5, 156.0, 312.0, None, 1.555);
pub const A100_PCIE_80: GpuSpec = spec("A100 PCIe 80GB", 19.5, 156.0, 312.0, None, 1.935);
pub const A100_PCIE_40: GpuSpec = spec("A100 PCIe 40GB", 19.5, 156.0, 312.0, None, 1.555);
pub const B200: GpuSpec = spec("B200", 75.0, 1125.0, 2250.0, Some(4500.0), 8.0);
pub const L40S: GpuSpec = spec("L40S", 91.6, 183.0, 362.05, Some(733.0), 0.864);
pub const MI300X: GpuSpec = GpuSpec {
    fp32_matrix: 163.4,
    ..spec("MI300X", 81.7, 653.7, 1307.4, Some(2614.9), 5.3)
};
pub const MI325X: GpuSpec = GpuSpec {
    fp32_matrix: 163.4,
    ..spec("MI325X", 81.7, 653.7, 1307.4, Some(2614.9), 6.0)
};

/// The datasheet of a GPU from its `deviceProperties`; `None` for one not in the table.
pub fn spec_of(gpu: &GpuInfo) -> Option<GpuSpec> {
    let name = gpu.name.to_ascii_uppercase();
    let memory_gb = gpu.memory_bytes.map(|b| b as f64 / 1e9);
    let has = |s: &str| name.contains(s);
    let spec = if has("H200") {
        if has("NVL") { H200_NVL } else { H200_SXM }
    } else if has("H100") {
        if has("NVL") {
            H100_NVL
        } else if has("PCIE") || gpu.sm_count == Some(114) {
            H100_PCIE
        } else {
            H100_SXM
        }
    } else if has("A100") {
        // 40 GB parts report about 42.5 GB, 80 GB parts about 85 GB.
        let big = has("80GB") || memory_gb.is_some_and(|g| g > 60.0);
        match (has("PCIE"), big) {
            (true, true) => A100_PCIE_80,
            (true, false) => A100_PCIE_40,
            (false, true) => A100_SXM_80,
            (false, false) => A100_SXM_40,
        }
    } else if has("B200") {
        B200
    } else if has("L40S") {
        L40S
    } else if has("MI325X") {
        MI325X
    } else if has("MI300X") {
        MI300X
    } else {
        return None;
    };
    Some(spec)
}

/// A roofline's two roofs for one data type: compute (TFLOP/s) and memory (TB/s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Peak {
    pub tflops: Option<f64>,
    pub tb_per_s: Option<f64>,
}

/// The trace's GPU and its figures.
#[derive(Debug, Clone)]
pub struct GpuPeaks {
    /// `deviceProperties[0].name`, empty when the trace has none.
    pub gpu_name: String,
    pub spec: Option<GpuSpec>,
}

/// The peaks of the trace's first GPU (PyTorch lists every visible GPU; a node's are alike).
pub fn gpu_peaks(trace: &Trace) -> GpuPeaks {
    let gpu = trace.gpus.first();
    GpuPeaks {
        gpu_name: gpu.map(|g| g.name.clone()).unwrap_or_default(),
        spec: gpu.and_then(spec_of),
    }
}

/// The precision class of a PyTorch data type name (TraceLens' `torch_dtype_map`).
pub fn precision(dtype: &str) -> Option<&'static str> {
    Some(match dtype.to_ascii_lowercase().as_str() {
        "float" | "c10::float" => "fp32",
        "c10::half" | "half" => "fp16",
        "c10::bfloat16" | "bfloat16" => "bf16",
        "c10::float8_e4m3fnuz"
        | "c10::float8_e4m3fn"
        | "c10::float8_e5m2"
        | "unsigned char"
        | "fp8" => "fp8",
        "double" | "c10::double" => "fp64",
        _ => return None,
    })
}

impl GpuPeaks {
    /// Why the peak columns are empty, when they are: the GPU is unknown or unnamed.
    pub fn note(&self) -> Option<String> {
        if self.spec.is_some() {
            return None;
        }
        Some(if self.gpu_name.is_empty() {
            "the trace names no GPU (no deviceProperties): no peaks, no % of roofline".to_string()
        } else {
            format!(
                "no published peaks known for GPU '{}' (known: H100, H200, A100, B200, L40S, \
                 MI300X, MI325X): no peaks, no % of roofline",
                self.gpu_name
            )
        })
    }

    /// The roofs for work on `unit` in `dtype`; `tf32` when the kernels say so. `None` for an
    /// unknown GPU.
    pub fn peak(&self, unit: Unit, dtype: &str, tf32: bool) -> Option<Peak> {
        let spec = self.spec?;
        let tflops = match (unit, precision(dtype)) {
            (Unit::Vector, Some(p)) if p != "fp64" => Some(spec.fp32),
            (Unit::Matrix, Some("fp32")) => Some(if tf32 { spec.tf32 } else { spec.fp32_matrix }),
            (Unit::Matrix, Some("fp16" | "bf16")) => Some(spec.bf16),
            (Unit::Matrix, Some("fp8")) => spec.fp8,
            _ => None,
        };
        Some(Peak {
            tflops,
            tb_per_s: Some(spec.tb_per_s),
        })
    }

    /// Every data type's compute roof for matrix work, and the vector roof, for a chart:
    /// (label, TFLOP/s).
    pub fn roofs(&self) -> Vec<(&'static str, f64)> {
        let Some(s) = self.spec else {
            return Vec::new();
        };
        let mut out = vec![("FP32", s.fp32), ("TF32", s.tf32), ("BF16/FP16", s.bf16)];
        if let Some(fp8) = s.fp8 {
            out.push(("FP8", fp8));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(name: &str, sms: u32, gb: f64) -> GpuInfo {
        GpuInfo {
            device: 0,
            name: name.to_string(),
            sm_count: Some(sms),
            memory_bytes: Some((gb * 1e9) as u64),
            bus_location: None,
            compute_capability: None,
            kind: Default::default(),
        }
    }

    #[test]
    fn gpus_are_told_apart_by_name_sms_and_memory() {
        assert_eq!(
            spec_of(&gpu("NVIDIA H100 80GB HBM3", 132, 85.0)),
            Some(H100_SXM)
        );
        assert_eq!(
            spec_of(&gpu("NVIDIA H100 PCIe", 114, 85.0)),
            Some(H100_PCIE)
        );
        assert_eq!(spec_of(&gpu("NVIDIA H100 NVL", 132, 99.0)), Some(H100_NVL));
        assert_eq!(spec_of(&gpu("NVIDIA H200", 132, 150.0)), Some(H200_SXM));
        assert_eq!(
            spec_of(&gpu("NVIDIA A100-SXM4-40GB", 108, 42.5)),
            Some(A100_SXM_40)
        );
        assert_eq!(
            spec_of(&gpu("NVIDIA A100-SXM4-80GB", 108, 85.0)),
            Some(A100_SXM_80)
        );
        assert_eq!(
            spec_of(&gpu("NVIDIA A100 80GB PCIe", 108, 85.0)),
            Some(A100_PCIE_80)
        );
        assert_eq!(
            spec_of(&gpu("AMD Instinct MI300X", 304, 206.0)),
            Some(MI300X)
        );
        assert_eq!(spec_of(&gpu("Tesla V100-SXM2-16GB", 80, 16.0)), None);
    }

    #[test]
    fn matrix_fp32_is_cuda_cores_unless_tf32() {
        let p = GpuPeaks {
            gpu_name: String::new(),
            spec: Some(H100_SXM),
        };
        let roof = |u, d, t| p.peak(u, d, t).and_then(|p| p.tflops);
        assert_eq!(roof(Unit::Matrix, "float", false), Some(67.0));
        assert_eq!(roof(Unit::Matrix, "float", true), Some(494.5));
        assert_eq!(roof(Unit::Matrix, "c10::BFloat16", false), Some(989.5));
        assert_eq!(roof(Unit::Vector, "c10::Half", false), Some(67.0));
        assert_eq!(roof(Unit::Matrix, "double", false), None);
        let amd = GpuPeaks {
            gpu_name: String::new(),
            spec: Some(MI300X),
        };
        let amd_fp32 = amd
            .peak(Unit::Matrix, "float", false)
            .and_then(|p| p.tflops);
        assert_eq!(amd_fp32, Some(163.4));
        let unknown = GpuPeaks {
            gpu_name: "X".into(),
            spec: None,
        };
        assert_eq!(unknown.peak(Unit::Matrix, "float", false), None);
    }
}
