int a = 1'000'000;
float b = 0x1p-3f + 1.0e+5 + .5;
char c = '\'';
char d = u8'x';
void f(Tensor& y, float s = 1e-3f) {}
