#define V(n, ...) void n(__VA_ARGS__) {}
#define O(n, ...) void n(int a __VA_OPT__(,) __VA_ARGS__) {}
#define G(n, args...) void n(BE::Tensor y, ## args) {}
// @BE v1
V(v1, const BE::Tensor x, BE::Tensor y)
// @BE o1
O(o1, BE::Tensor y)
// @BE g1
G(g1)
