// @BE f
void f(const BE::Tensor a, BE::Tensor o, const int64_t stream) {}
