Tensor operator+(const Tensor& a, const Tensor& b);
struct Q { bool operator()(int) const; };
void f(Tensor& y) {}
