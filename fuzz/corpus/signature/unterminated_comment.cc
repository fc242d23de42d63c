void f(const Tensor& x, Tensor& y) {}
/* never closed
void g(Tensor& y) {}
