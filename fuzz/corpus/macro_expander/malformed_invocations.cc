#define F(s, t) void f##s(t y) {}
// @BE f_1
F(_1)
// @BE f_2
F(_2, BE::Tensor
int z;
