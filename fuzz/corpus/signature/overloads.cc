void f(const Tensor& x, Tensor& y);
void f(const Tensor& x, Tensor& y) {}
void g(const Tensor& x, Tensor& y);
void g(Tensor& y, float s);
namespace n1 { void h(Tensor& y); }
namespace n2 { void h(Tensor& y); }
