// @BE f
// @BE f
void f(Tensor& y) {}
