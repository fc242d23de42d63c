void f(const TensorList& xs, Tensor& y) {}
void g(const jaxcc::Tensor& x, ::BE::Tensor& y, Tensor const& z) {}
