extern "C" {
 void c1(Tensor o);
}
extern "C" void c2(Tensor o) {}
extern "C++" { void c3(const Tensor& a, Tensor& b, int64_t n); }
