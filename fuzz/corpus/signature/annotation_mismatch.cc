// @BE f ret arg attr.s:int32 stream
void f(const Tensor& x, Tensor& y, float s) {}
