// @BE add arg ret
void add(const BE::Tensor x, BE::Tensor out) {}
// @BE scale arg ret attr.s:float32 stream
void scale(const BE::Tensor x, BE::Tensor out, float s, int64_t stream) {}
