// @BE add arg ret
void add(const Tensor& x, Tensor& y);
#include "a.h"
void add(const Tensor& x, Tensor& y) {}
// @BE mul
void mul(const Tensor& x, Tensor& y, float s) {}
