void f(Tensor& y, float a$b, int café);
void g(Tensor& y, float s, int n, double s);
