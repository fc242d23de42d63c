void f(const Tensor& x, Tensor& y
void g(Tensor& y) {}
}
}
namespace z {
void h(Tensor& y, float s);
