// Usage: void f(const BE::Tensor x, BE::Tensor y, float unused);
/* void f(int a, int b); */
const char* kDoc = "void f(BE::Tensor only)";
const char* kRaw = R"(void f(double d))";
#define SIG "void f(bool)"
void f(const BE::Tensor x, BE::Tensor out, int n) {}
