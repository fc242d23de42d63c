// @BE f arg ret
void f(const Tensor& x,
       Tensor& y) {}
