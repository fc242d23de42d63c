void f(Tensor& y, float* p, const float& r, float&& rr, int a[3], ...) {}
void g(Tensor* y) {}
void h(Tensor&& y) {}
