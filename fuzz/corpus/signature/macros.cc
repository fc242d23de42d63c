#define GEN(S, T) void f##S(const Tensor& x, Tensor& y, T v) {}
namespace ops {
// @BE f_f32 arg ret attr.v:float32
GEN(_f32, float)
}
// @BE f_f64 arg ret attr.v:float64
GEN(_f64, double)
DEFINE(vector_add, float)
#define MULTI(a) \
  void a(Tensor& o) {}
