void f(const Tensor&, Tensor&, float) {}
void g(const Tensor&, Tensor&);
