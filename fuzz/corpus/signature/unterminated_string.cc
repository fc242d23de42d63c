const char* s = "open
void f(Tensor& y) {}
char c = 'x
void g(Tensor& y, int n) {}
