// @BE f
void f(const BE::Tensor a, // input; const, not written
       BE::Tensor o) {}
// @jaxcc g
void g(BE::Tensor o /* out, 2-D */, float s);
