// @BE f
template <typename T> void f(const Tensor& x, Tensor& y) {}
template <typename T, int N = (3 > 2)> void t1(Tensor o) {}
template <> void t1<float>(Tensor o) {}
template <class T> __global__ void __launch_bounds__(256) k2(T* x) {}
template <class A, class B = std::pair<A, int>> void t2(const std::vector<A>& v, Tensor& o);
void plain(Tensor o);
