using F = void(Tensor&);
typedef void (*G)(Tensor& y);
friend void h(Tensor& y);
using namespace std;
void f(Tensor& y) {}
