void f(const Tensor& x, Tensor& y, cudaStream_t a, int64_t stream) {}
void g(Tensor& y, const cudaStream_t& s) {}
void h(Tensor& y, int64_t strm) {}
