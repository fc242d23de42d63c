"""The CUDA source of the per-call resource comparison (benchmarks/bench_gpu_resources.py) and
of tests/gpu/test_state_gpu.py: each resource held the jaxcc way (per-call-site `State`, an
XLA-placed `Scratch`) beside the same work done per call."""

SOURCE = r"""
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <atomic>
#include <map>
#include <memory>
#include <vector>
#include "jaxcc/jaxcc.h"

// How many cuBLAS handles and tables this process has made: one per call site is the claim.
static std::atomic<long long> g_handles_made{0};
static std::atomic<long long> g_tables_made{0};

// One cuBLAS handle, made on the device current at construction.
struct Cublas {
  cublasHandle_t handle = nullptr;
  Cublas() {
    JAXCC_CHECK(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS) << "cublasCreate failed";
    ++g_handles_made;
  }
  ~Cublas() { cublasDestroy(handle); }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;
};

// The call site's handles, one per device (docs/usage.md, "A per-device resource in State"):
// XLA shares one State among the executions on every device of a program, and a handle belongs
// to the device it was made on. Filled lazily, under the state's lock, on the device jaxcc made
// current (that of XLA's stream).
struct CublasPerDevice {
  std::map<int, std::unique_ptr<Cublas>> by_device;
  cublasHandle_t ForCurrentDevice() {
    int device = -1;
    JAXCC_CUDA_CHECK(cudaGetDevice(&device));
    auto& slot = by_device[device];
    if (!slot) slot = std::make_unique<Cublas>();
    return slot->handle;
  }
};

static void Saxpy(cublasHandle_t handle, cudaStream_t s, const jaxcc::Tensor& x,
                  const jaxcc::Tensor& y0, jaxcc::Tensor& y, float alpha) {
  JAXCC_CUDA_CHECK(cudaMemcpyAsync(y.data_ptr<float>(), y0.data_ptr<float>(), y.nbytes(),
                                   cudaMemcpyDeviceToDevice, s));
  cublasSetStream(handle, s);
  JAXCC_CHECK(cublasSaxpy(handle, static_cast<int>(x.numel()), &alpha, x.data_ptr<float>(), 1,
                          y.data_ptr<float>(), 1) == CUBLAS_STATUS_SUCCESS) << "cublasSaxpy failed";
}

// y = alpha * x + y0 with the call site's handle.
void saxpy_state(const jaxcc::Tensor& x, const jaxcc::Tensor& y0, jaxcc::Tensor& y,
                 jaxcc::State<CublasPerDevice>& blas, float alpha, int64_t stream) {
  auto lock = blas.lock();  // the handle's stream is per call: one execution at a time sets it
  Saxpy(blas->ForCurrentDevice(), reinterpret_cast<cudaStream_t>(stream), x, y0, y, alpha);
}

// The same with a handle made and destroyed in every call (what a kernel without state does).
void saxpy_per_call(const jaxcc::Tensor& x, const jaxcc::Tensor& y0, jaxcc::Tensor& y,
                    float alpha, int64_t stream) {
  Cublas blas;
  Saxpy(blas.handle, reinterpret_cast<cudaStream_t>(stream), x, y0, y, alpha);
}

void handles_made(const jaxcc::Tensor& x, jaxcc::Tensor& out, int64_t stream) {
  const int made[2] = {static_cast<int>(g_handles_made.load()),
                       static_cast<int>(g_tables_made.load())};
  JAXCC_CUDA_CHECK(cudaMemcpyAsync(out.data_ptr<int32_t>(), made, sizeof(made),
                                   cudaMemcpyHostToDevice, reinterpret_cast<cudaStream_t>(stream)));
  JAXCC_CUDA_CHECK(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream)));
}

__global__ void twice_kernel(const float* x, float* tmp, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) tmp[i] = 2.0f * x[i];
}
__global__ void plus_one_kernel(const float* tmp, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[n - 1 - i] = tmp[i] + 1.0f;
}
static void TwoPass(const float* x, float* tmp, float* y, int n, cudaStream_t s) {
  twice_kernel<<<(n + 255) / 256, 256, 0, s>>>(x, tmp, n);
  plus_one_kernel<<<(n + 255) / 256, 256, 0, s>>>(tmp, y, n);
}

// y = reverse(2x + 1) through a workspace XLA placed ahead of time.
void twopass_scratch(const jaxcc::Tensor& x, jaxcc::Tensor& y, jaxcc::Scratch scratch,
                     int64_t stream) {
  const int n = static_cast<int>(x.numel());
  JAXCC_CHECK(scratch.count<float>() >= static_cast<size_t>(n)) << "scratch too small";
  TwoPass(x.data_ptr<float>(), scratch.as<float>(), y.data_ptr<float>(), n,
          reinterpret_cast<cudaStream_t>(stream));
}

// The same with cudaMalloc and cudaFree in every call.
void twopass_malloc(const jaxcc::Tensor& x, jaxcc::Tensor& y, int64_t stream) {
  const int n = static_cast<int>(x.numel());
  float* tmp = nullptr;
  JAXCC_CUDA_CHECK(cudaMalloc(&tmp, n * sizeof(float)));
  TwoPass(x.data_ptr<float>(), tmp, y.data_ptr<float>(), n, reinterpret_cast<cudaStream_t>(stream));
  JAXCC_CUDA_CHECK(cudaFree(tmp));  // waits for the kernels: the memory must outlive them
}

// A table built on the host and uploaded (a lookup table, precomputed weights): once per call
// site in State, or in every call.
struct Table {
  float* data = nullptr;
  int size = 0;
  explicit Table(int64_t table_size) : size(static_cast<int>(table_size)) {
    std::vector<float> host(size);
    for (int i = 0; i < size; ++i) host[i] = 0.5f * static_cast<float>(i % 1000);
    JAXCC_CUDA_CHECK(cudaMalloc(&data, size * sizeof(float)));
    JAXCC_CUDA_CHECK(cudaMemcpy(data, host.data(), size * sizeof(float), cudaMemcpyHostToDevice));
    ++g_tables_made;
  }
  ~Table() { cudaFree(data); }
};
__global__ void lookup_kernel(const int* idx, const float* table, float* y, int n, int size) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = table[((idx[i] % size) + size) % size];
}
void lookup_state(const jaxcc::Tensor& idx, jaxcc::Tensor& y, jaxcc::State<Table>& table,
                  int64_t table_size, int64_t stream) {
  const int n = static_cast<int>(idx.numel());
  lookup_kernel<<<(n + 255) / 256, 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
      idx.data_ptr<int>(), table->data, y.data_ptr<float>(), n, table->size);
}
void lookup_rebuild(const jaxcc::Tensor& idx, jaxcc::Tensor& y, int64_t table_size,
                    int64_t stream) {
  Table table(table_size);
  const int n = static_cast<int>(idx.numel());
  auto s = reinterpret_cast<cudaStream_t>(stream);
  lookup_kernel<<<(n + 255) / 256, 256, 0, s>>>(idx.data_ptr<int>(), table.data,
                                                 y.data_ptr<float>(), n, table.size);
  JAXCC_CUDA_CHECK(cudaStreamSynchronize(s));  // the table is freed on return
}
"""

FUNCTIONS = [
    "saxpy_state",
    "saxpy_per_call",
    "handles_made",
    "twopass_scratch",
    "twopass_malloc",
    "lookup_state",
    "lookup_rebuild",
]


def load(name="gpu_resources", **kwargs):
    import jaxcc

    return jaxcc.load_cuda_inline(
        name, SOURCE, functions=FUNCTIONS, extra_ldflags=["-lcublas"], **kwargs
    )
