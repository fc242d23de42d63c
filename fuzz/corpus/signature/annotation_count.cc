// @BE f arg
void f(const Tensor& x, Tensor& y, float s) {}
// @BE g arg ret ret
void g(const Tensor& x, Tensor& y) {}
