#include <cstdint>
#pragma once
  #  define X(a) a /* multi
line */ + 1
#if 1 // @BE f arg ret
void f(const Tensor& x, Tensor& y) {}
#endif
