void outer(Tensor o) {
  void inner(int);
  if (x) { g(1); }
  auto l = [](int z) { return z; };
}
void after(Tensor o) {}
struct S { void member(Tensor o); static void smember(int); };
class C : public Base { public: C(int); void m() {} } c;
enum class E : int { A = 1, B };
int x = compute(1, 2);
auto lambda = [](Tensor o) { fill(o); };
int table[] = {f(1), f(2)};
Widget w{make(3)};
void real(Tensor o);
