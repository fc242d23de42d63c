void f(const Tensor& x, Tensor& y, float s = 1.0f, int n = g(1, 2)) {}
