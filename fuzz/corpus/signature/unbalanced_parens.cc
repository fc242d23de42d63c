void f(const Tensor& x, Tensor& y, int a[(3]) {}
void g(Tensor& y)) {}
void h(((Tensor& y);
