// The seeds' CPU example, as a file: loaded with jaxcc.load_cpp_file in the tests.
#include "brainevent/common.h"
#include "seed_helpers.h"

void add_one(const BE::Tensor x, BE::Tensor out) {
    const float* in = static_cast<const float*>(x.data_ptr());
    float* o = static_cast<float*>(out.data_ptr());
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = seed_helpers::plus_one(in[i]);
}

void scale_by(const BE::Tensor x, BE::Tensor out, float factor) {
    const float* in = static_cast<const float*>(x.data_ptr());
    float* o = static_cast<float*>(out.data_ptr());
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] * factor;
}
