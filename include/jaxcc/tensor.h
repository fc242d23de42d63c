// jaxcc::Tensor: a non-owning, trivially copyable view of one XLA buffer, usable on host and
// device.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>

#include "jaxcc/check.h"
#include "jaxcc/dtype.h"
#include "jaxcc/dtype_view.h"
#include "jaxcc/limits.h"
#include "jaxcc/macros.h"

namespace jaxcc {

namespace detail {

// The host side of a failed Tensor precondition: throws CheckError with the message. Each is
// formatted into a buffer that holds its longest text (the method is one of Tensor's own names),
// out of line and cold: every unit that builds a Tensor compiles them, among them the frame
// runtime on a cache's first build, where std::string's `+` chains cost (decision 161c).
#if defined(__GNUC__) || defined(__clang__)
#define JAXCC_DETAIL_TENSOR_COLD __attribute__((noinline, cold))
#else
#define JAXCC_DETAIL_TENSOR_COLD
#endif

[[noreturn]] JAXCC_DETAIL_TENSOR_COLD inline void ThrowTensorIndexError(const char* method,
                                                                        int index, int ndim) {
  char text[192];
  if (ndim == 0) {
    std::snprintf(text, sizeof(text),
                  "jaxcc::Tensor::%s(%d): dimension index out of range for a rank-%d tensor "
                  "(a rank-0 tensor has no dimensions)",
                  method, index, ndim);
  } else {
    std::snprintf(text, sizeof(text),
                  "jaxcc::Tensor::%s(%d): dimension index out of range for a rank-%d tensor "
                  "(valid: %d..%d)",
                  method, index, ndim, -ndim, ndim - 1);
  }
  ThrowCheckError(text);
}

[[noreturn]] JAXCC_DETAIL_TENSOR_COLD inline void ThrowTensorRankError(int ndim) {
  char text[192];
  std::snprintf(text, sizeof(text),
                "jaxcc::Tensor: rank %d is outside the supported range 0..%d (jaxcc::kMaxDim); "
                "reshape the array to at most %d dimensions before calling the kernel",
                ndim, kMaxDim, kMaxDim);
  ThrowCheckError(text);
}

[[noreturn]] JAXCC_DETAIL_TENSOR_COLD inline void ThrowTensorShapeError(int dim,
                                                                        std::int64_t size) {
  char text[96];
  std::snprintf(text, sizeof(text), "jaxcc::Tensor: dimension %d has negative size %lld", dim,
                static_cast<long long>(size));
  ThrowCheckError(text);
}

[[noreturn]] JAXCC_DETAIL_TENSOR_COLD inline void ThrowTensorNullShapeError(int ndim) {
  char text[96];
  std::snprintf(text, sizeof(text), "jaxcc::Tensor: shape pointer is null for a rank-%d tensor",
                ndim);
  ThrowCheckError(text);
}

[[noreturn]] JAXCC_DETAIL_TENSOR_COLD inline void ThrowTensorTooLargeForInt(std::int64_t numel) {
  char text[160];
  std::snprintf(text, sizeof(text),
                "jaxcc::Tensor::numel_checked_int(): %lld elements do not fit in int (max %d); "
                "index with int64_t or split the array",
                static_cast<long long>(numel), INT_MAX);
  ThrowCheckError(text);
}

/// The DTypes of `mask` by name, "float16, uint16, bfloat16".
inline std::string DTypeMaskNames(std::uint32_t mask) {
  std::string names;
  for (unsigned d = 0; d < 32; ++d) {
    if ((mask >> d & 1u) == 0) continue;
    const char* name = d == 31 ? "invalid" : dtype_name(static_cast<DType>(d));
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  return names;
}

/// Host side of a data_ptr<T>() whose T cannot view the buffer's dtype (dtype_view.h): throws
/// DTypeError naming the parameter (when the Tensor came from a call: the handler prefixes the
/// function), both types and the fix. Out of line so that data_ptr<T>() stays a compare.
// The standard attribute first: Clang accepts a GNU attribute after it, not before.
[[noreturn]]
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline, cold))
#endif
inline void
ThrowDataPtrMismatch(const char* param, DType actual, const char* type, std::uint32_t accepted) {
  const std::string what = param == nullptr ? std::string("a jaxcc::Tensor")
                           : *param == '\0' ? std::string("an unnamed parameter")
                                            : "parameter '" + std::string(param) + "'";
  const std::string wanted = DTypeMaskNames(accepted);
  throw DTypeError(what + " is " + dtype_name(actual) + ", but the kernel reads it as " + type +
                       " (data_ptr<" + type + ">(), which reads " + wanted +
                       "): pass an array of that dtype (e.g. .astype(jnp." +
                       wanted.substr(0, wanted.find(',')) + ")), or read the " +
                       dtype_name(actual) +
                       " buffer with its own type (jaxcc::DType dispatch: JAXCC_DISPATCH_*); "
                       "untyped data_ptr() skips this check",
                   actual);
}

}  // namespace detail

/// A non-owning view of a dense array: data pointer, element type, shape and element strides.
///
/// It owns nothing and is trivially copyable, so it is passed by value to host functions and to
/// __global__ kernels alike; every accessor works in device code. Buffers coming from XLA are
/// always dense row-major, so their strides are the C-contiguous ones.
///
/// Precondition failures (rank outside 0..kMaxDim, dimension index out of range, negative size)
/// throw jaxcc::CheckError on the host. In device code, where nothing can be thrown, they
/// printf() a message and yield a harmless value: an accessor returns 0, and a constructor yields
/// the empty view of Tensor() (numel() == 0, null data) with the requested dtype.
class Tensor {
 public:
  /// Same limit as jaxcc::kMaxDim, reachable as Tensor::kMaxDim.
  static constexpr int kMaxDim = ::jaxcc::kMaxDim;

  /// An empty view: null data, DType::Invalid, rank 1 with extent 0, so numel() == 0 and a
  /// kernel that loops over numel() touches nothing (a rank-0 default would claim one element).
  Tensor() = default;

  /// Views `data` as a C-contiguous array of `ndim` dimensions `shape[0..ndim)`; strides are
  /// computed (last dimension has stride 1). `shape` is copied and may be freed afterwards.
  JAXCC_HOST_DEVICE Tensor(void* data, const std::int64_t* shape, int ndim, DType dtype)
      : data_(data), dtype_(dtype) {
    if (!Init(shape, nullptr, ndim)) MakeEmpty();
  }

  /// As above, with explicit element strides `strides[0..ndim)` (for views that are not
  /// contiguous; is_contiguous() tells them apart).
  JAXCC_HOST_DEVICE Tensor(void* data, const std::int64_t* shape, const std::int64_t* strides,
                           int ndim, DType dtype)
      : data_(data), dtype_(dtype) {
    if (!Init(shape, strides, ndim)) MakeEmpty();
  }

  /// Untyped pointer to the first element, unchecked: the explicit escape from data_ptr<T>()'s
  /// check. The view is shallow: a const Tensor still hands out a mutable pointer, exactly as
  /// brainevent did (`static_cast<const float*>(a.data_ptr())`).
  JAXCC_HOST_DEVICE void* data_ptr() const { return data_; }
  /// The data pointer as T*, checked on the host: T must be able to view dtype() by the rule of
  /// jaxcc::DTypeView (dtype_view.h: the buffer's own type, bool as a one-byte integer, the 16-bit
  /// floats as uint16_t, signed and unsigned integers of one width), else jaxcc::DTypeError
  /// naming the parameter and both types. cv-qualifiers are ignored (data_ptr<const float>()).
  /// A T that is no element type does not compile. A default-constructed (empty, Invalid) Tensor
  /// hands out its null pointer. Device code cannot throw: there the pointer is unchecked, so
  /// take typed pointers on the host and pass them to the kernel.
  template <class T>
  JAXCC_HOST_DEVICE T* data_ptr() const {
    static_assert(DTypeView<std::remove_cv_t<T>>::mask != 0,
                  "jaxcc::Tensor::data_ptr<T>(): T is not an element type jaxcc knows (see "
                  "jaxcc::DTypeView in jaxcc/dtype_view.h); read the buffer with the untyped "
                  "data_ptr() and cast it, or specialise jaxcc::DTypeView for T");
#if !JAXCC_DEVICE_CODE
    if (!JAXCC_PREDICT_TRUE(dtype_view_accepts<T>(dtype_)) &&
        !(dtype_ == DType::Invalid && data_ == nullptr)) {
      detail::ThrowDataPtrMismatch(name_, dtype_, DTypeView<std::remove_cv_t<T>>::name,
                                   DTypeView<std::remove_cv_t<T>>::mask);
    }
#endif
    return static_cast<T*>(data_);
  }
  /// Same as data_ptr().
  JAXCC_HOST_DEVICE void* data() const { return data_; }

  /// Number of dimensions, 0..kMaxDim.
  JAXCC_HOST_DEVICE int ndim() const { return ndim_; }
  /// Extent of dimension `i`; negative `i` counts from the end (-1 is the last dimension).
  JAXCC_HOST_DEVICE std::int64_t size(int i) const {
    int d = Normalize(i, "size");
    return d < 0 ? 0 : shape_[d];
  }
  /// Same as size(i).
  JAXCC_HOST_DEVICE std::int64_t shape(int i) const {
    int d = Normalize(i, "shape");
    return d < 0 ? 0 : shape_[d];
  }
  /// Stride of dimension `i` in elements (not bytes); negative `i` counts from the end.
  JAXCC_HOST_DEVICE std::int64_t stride(int i) const {
    int d = Normalize(i, "stride");
    return d < 0 ? 0 : strides_[d];
  }
  /// The ndim() extents, contiguous in memory.
  JAXCC_HOST_DEVICE const std::int64_t* shape_ptr() const { return shape_; }
  /// The ndim() strides in elements, contiguous in memory.
  JAXCC_HOST_DEVICE const std::int64_t* strides_ptr() const { return strides_; }

  /// Element type.
  JAXCC_HOST_DEVICE DType dtype() const { return dtype_; }
  /// The kernel parameter this view was made for (its C++ name, for messages), or nullptr for a
  /// Tensor the code built itself. Points at the handler's static text: copying is free.
  JAXCC_HOST_DEVICE const char* name() const { return name_; }
  /// Names the parameter in data_ptr<T>()'s error. `name` must outlive every copy (a literal).
  JAXCC_HOST_DEVICE void set_name(const char* name) { name_ = name; }
  /// Bytes per element; 0 for DType::Invalid.
  JAXCC_HOST_DEVICE std::size_t element_size() const { return dtype_size(dtype_); }

  /// Number of elements: 1 for rank 0, 0 when any dimension is 0.
  /// Stored at construction: kernels call it in loop conditions, and a load of one member lets
  /// the compiler hoist it and vectorise the loop, where recomputing the product did not.
  JAXCC_HOST_DEVICE std::int64_t numel() const { return numel_; }
  /// numel() as an int, for kernels that index with int. Fails (CheckError on the host; printf
  /// and 0 on the device) when the count exceeds INT_MAX instead of silently wrapping.
  JAXCC_HOST_DEVICE int numel_checked_int() const {
    std::int64_t n = numel();
    if (n > INT_MAX) {
#if JAXCC_DEVICE_CODE
      printf("jaxcc::Tensor::numel_checked_int(): %lld elements do not fit in int\n",
             static_cast<long long>(n));
      return 0;
#else
      detail::ThrowTensorTooLargeForInt(n);
#endif
    }
    return static_cast<int>(n);
  }
  /// numel() * element_size().
  JAXCC_HOST_DEVICE std::size_t nbytes() const {
    return static_cast<std::size_t>(numel()) * element_size();
  }
  /// True when the strides are the C-contiguous ones (dimensions of extent 1 are ignored, and an
  /// empty tensor is contiguous). Always true for tensors built from XLA buffers.
  JAXCC_HOST_DEVICE bool is_contiguous() const {
    if (numel() == 0) return true;
    std::int64_t expected = 1;
    for (int d = ndim_ - 1; d >= 0; --d) {
      if (shape_[d] == 1) continue;
      if (strides_[d] != expected) return false;
      expected *= shape_[d];
    }
    return true;
  }

 private:
  // Validates and copies shape/strides; false (device only) when the arguments are invalid.
  JAXCC_HOST_DEVICE bool Init(const std::int64_t* shape, const std::int64_t* strides, int ndim) {
    if (ndim < 0 || ndim > kMaxDim) {
#if JAXCC_DEVICE_CODE
      printf("jaxcc::Tensor: rank %d is outside 0..%d\n", ndim, kMaxDim);
      return false;
#else
      detail::ThrowTensorRankError(ndim);
#endif
    }
    if (ndim > 0 && shape == nullptr) {
#if JAXCC_DEVICE_CODE
      printf("jaxcc::Tensor: null shape pointer for rank %d\n", ndim);
      return false;
#else
      detail::ThrowTensorNullShapeError(ndim);
#endif
    }
    for (int d = 0; d < ndim; ++d) {
      if (shape[d] < 0) {
#if JAXCC_DEVICE_CODE
        printf("jaxcc::Tensor: dimension %d has negative size %lld\n", d,
               static_cast<long long>(shape[d]));
        return false;
#else
        detail::ThrowTensorShapeError(d, shape[d]);
#endif
      }
      shape_[d] = shape[d];
    }
    ndim_ = ndim;
    numel_ = 1;
    for (int d = 0; d < ndim; ++d) numel_ *= shape_[d];
    if (strides != nullptr) {
      for (int d = 0; d < ndim; ++d) strides_[d] = strides[d];
    } else {
      std::int64_t stride = 1;
      for (int d = ndim - 1; d >= 0; --d) {
        strides_[d] = stride;
        // A zero extent would zero every outer stride; keep them meaningful as in NumPy.
        stride *= shape_[d] > 0 ? shape_[d] : 1;
      }
    }
    return true;
  }

  JAXCC_HOST_DEVICE void MakeEmpty() {
    data_ = nullptr;
    ndim_ = 1;
    shape_[0] = 0;
    strides_[0] = 1;
    numel_ = 0;
  }

  // Maps a possibly negative dimension index to 0..ndim-1; -1 (device only) when out of range.
  JAXCC_HOST_DEVICE int Normalize(int i, const char* method) const {
    int d = i < 0 ? i + ndim_ : i;
    if (d < 0 || d >= ndim_) {
#if JAXCC_DEVICE_CODE
      printf("jaxcc::Tensor::%s(%d): dimension index out of range for a rank-%d tensor\n", method,
             i, ndim_);
      return -1;
#else
      detail::ThrowTensorIndexError(method, i, ndim_);
#endif
    }
    return d;
  }

  // The defaults describe the empty view of Tensor() and MakeEmpty().
  void* data_ = nullptr;
  std::int64_t shape_[kMaxDim] = {};
  std::int64_t strides_[kMaxDim] = {1};
  std::int64_t numel_ = 0;
  const char* name_ = nullptr;
  int ndim_ = 1;
  DType dtype_ = DType::Invalid;
};

}  // namespace jaxcc
