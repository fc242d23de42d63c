namespace a { namespace b {
// @BE f1
void f1(Tensor& y) {}
} void f2(Tensor o); }
namespace a::b::c { void f3(Tensor o); }
inline namespace v1 { void f4(Tensor o); }
namespace { void f5(Tensor o); }
namespace x { namespace { void f6(Tensor o); } }
namespace [[deprecated]] old { void f7(Tensor o); }
namespace alias = a::b;
void f8(Tensor o);
