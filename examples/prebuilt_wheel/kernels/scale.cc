// y = x * factor + shift: the kernel this example ships prebuilt.
// @BE scale_shift arg ret attr.factor:float32 attr.shift:float32
void scale_shift(const jaxcc::Tensor x, jaxcc::Tensor y, float factor, float shift) {
  JAXCC_CHECK(x.numel() == y.numel()) << "scale_shift: x and y differ in size";
  const float* in = x.data_ptr<float>();
  float* out = y.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] * factor + shift;
}
