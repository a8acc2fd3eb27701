// One small kernel for Nsight Compute to profile with different section sets: strided global
// loads (excess L2 sectors), a dynamically indexed local array (register spilling to local
// memory) and shared memory. Built and profiled on the GPU machine by run_ncu_units_device.sh,
// which asks which sections make ncu print which units on its raw page
// (tests/fixtures/ncu_units/).
#include <cstdio>
__global__ void strided_local(const float *in, float *out, int stride, int n) {
    __shared__ float tile[256];
    float local[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 64; ++k) local[k] = in[((i + k) * stride) % n];
    tile[threadIdx.x] = local[(i * 7) & 63];
    __syncthreads();
    out[i] = tile[(threadIdx.x * 33) % 256] + local[(i * 13) & 63];
}
int main() {
    int n = 1 << 22;
    float *in, *out;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    cudaMemset(in, 0, n * sizeof(float));
    strided_local<<<n / 256, 256>>>(in, out, 33, n);
    cudaDeviceSynchronize();
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    return 0;
}
