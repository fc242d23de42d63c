// @BE f arg ret // two tensors
// @BE g arg ret// glued
void f(const Tensor& x, Tensor& y) {}
void g(const Tensor& x, Tensor& y) {}
