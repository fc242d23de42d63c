void f(const Tensor& x __attribute__((unused)), Tensor& y, float s __attribute__((unused))) {}
void g(Tensor& y, void (*cb)(int), float s) {}
void h(Tensor& y, decltype(1.0f) s) {}
void i([[maybe_unused]] const Tensor& x, alignas(16) Tensor& y) {}
