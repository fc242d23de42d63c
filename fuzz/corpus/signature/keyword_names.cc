// @BE class arg ret
void new_(Tensor& y) {}
// @BE int
