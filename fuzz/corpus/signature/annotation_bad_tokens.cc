// @BE f arg rett attr.s:float
void f(const Tensor& x, Tensor& y, float s) {}
