namespace ops { void f(const Tensor& x, Tensor& y); }
void ops::f(const Tensor& x, Tensor& y) {}
void ::g(Tensor o);
