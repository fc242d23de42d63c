void f(const Tensor& x) {}
void g(const Tensor& x, float s) {}
void h() {}
void k(void) {}
