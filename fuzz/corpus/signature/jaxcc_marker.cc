//@jaxcc f arg ret
   ///  @jaxcc g
void f(const Tensor& x, Tensor& y) {}
void g(Tensor& y, double d, bool flag, uint8_t b) {}
