#define A B
#define B A
// @BE f
A
#define T T
#define F(s) void f##s(const T x, BE::Tensor y) {}
// @BE f_1
F(_1)
