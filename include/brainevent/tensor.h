// brainevent compatibility: BE::Tensor, BE::DType, BE::kMaxDim, dtype_size/dtype_name.
#pragma once

#include "jaxcc/dtype.h"
#include "jaxcc/tensor.h"

/// brainevent's namespace is jaxcc's: BE::Tensor is jaxcc::Tensor, BE::CheckError is
/// jaxcc::CheckError, and so on.
namespace BE = ::jaxcc;
