#define FFI(SUFFIX, T) \
void op##SUFFIX(const BE::Tensor x, BE::Tensor y, T k, int64_t stream) {}
// @BE op_f32
FFI(_f32, float)
// @BE op_f64
FFI(_f64, double)
