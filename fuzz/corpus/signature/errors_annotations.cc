// @BE
// @jaxcc 3d arg ret
// @BE ns::f
// @BE f arg ret
void f();
  // @jaxcc f
