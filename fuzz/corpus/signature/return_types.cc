int f(const Tensor& x, Tensor& y) { return 0; }
auto g(const Tensor& x, Tensor& y) -> void {}
static inline Status h(Tensor& y) { return {}; }
std::vector<int> c9(Tensor o);
decltype(auto) c10(Tensor o);
void c11 [[deprecated]] (Tensor o);
const Status* c12(Tensor o) noexcept;
[[nodiscard]] int c5(Tensor o);
__attribute__((visibility("default"))) void c6(Tensor o);
void __attribute__((noinline)) c7(Tensor o);
