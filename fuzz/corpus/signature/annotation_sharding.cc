#include "jaxcc/jaxcc.h"
// @BE row_norm arg ret sharding="r c -> r c; need_replication: c"
void row_norm(const jaxcc::Tensor x, jaxcc::Tensor out) {}
// @BE matvec sharding="r k, k -> r; reduction: k"
void matvec(const jaxcc::Tensor a, const jaxcc::Tensor v, jaxcc::Tensor out) {}
// @BE add_one sharding="... -> ..."
void add_one(const jaxcc::Tensor x, jaxcc::Tensor out) {}
