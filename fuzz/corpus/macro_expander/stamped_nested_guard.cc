#ifndef TERM
#define TERM(w, s) (((s) != 0) ? (w) : 0)
#endif
#define K(S, T) __global__ void k##S(const T* w, T* o) { o[0] = TERM(w[0], 1); }
#define F(S, T) void f##S(const BE::Tensor w, BE::Tensor o, int64_t stream) { (void)#S; }
K(_a, float)
namespace ops {
// @BE f_a
F(_a, float)
}
