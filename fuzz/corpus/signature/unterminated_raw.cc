void f(Tensor& y) {}
auto r = R"xyz(never closed )xy"
void g(Tensor& y) {}
