// void f(BE::Tensor o, float old_scale) {}
#if 0
void f(BE::Tensor o, int legacy) {}
#elif 1
void f(const BE::Tensor x, BE::Tensor o) {}
#else
void f(int gone);
#endif
#if defined(FOO)
void g(Tensor& o);
#endif
