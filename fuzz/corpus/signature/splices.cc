// @BE f arg \
ret
void f(const Tensor& x, \
 Tensor& y) {}
#define LONG \
  1
void g(Tensor& y) {}
