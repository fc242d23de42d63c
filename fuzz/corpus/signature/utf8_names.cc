// @BE café arg ret
void café(const Tensor& x, Tensor& y) {}
void fü(Tensor& y) {}
