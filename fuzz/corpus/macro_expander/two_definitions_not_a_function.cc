#define TWICE(s) void f##s(BE::Tensor y) {} void f##s(BE::Tensor y) {}
// @BE f_1
TWICE(_1)
#define S(n) struct n { int x; };
// @BE thing
S(thing)
