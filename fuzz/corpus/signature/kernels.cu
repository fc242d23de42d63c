__global__ void k1(float* x) {}
// @BE k1 arg ret
extern "C" __global__ void k3(const float* __restrict__ a, float* b, int n) {}
__host__ __device__ inline float sq(float v) { return v * v; }
void launch(const Tensor& x, Tensor& y, cudaStream_t stream) {
  k1<<<1, 32, 0, stream>>>(nullptr);
}
