void f(const Tensor& x, Tensor& y);
void f(Tensor& y, float s) {}
namespace n { void f(const Tensor& x, Tensor& y); }
