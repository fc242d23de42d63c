#define MODE 2
#if MODE * 2 == 4 && defined(MODE) && !defined(OTHER)
#define S(s) void f##s(BE::Tensor y) {}
#elif __CUDA_ARCH__ >= 800
#define S(s) void g##s(BE::Tensor y) {}
#else
#define S(s) void h##s(BE::Tensor y) {}
#endif
// @BE f_1
S(_1)
#undef S
#define S(s) void k##s(const BE::Tensor x, BE::Tensor y) {}
// @BE k_2
S(_2)
