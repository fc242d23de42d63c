void f(const Tensor& x, Tensor& y, cudaStream_t st, size_t n, long l, unsigned u, std::int32_t i, unsigned long long q, signed char c, short h) {}
