const char* a = R"(a " b)";
const char* b = u8R"d(// @BE x
)" )d";
auto c = LR"(x)"_s;
void f(Tensor& y) {}
