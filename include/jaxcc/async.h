// Asynchronous CPU kernels: the `jaxcc::Async` tag, standard C++ only.
//
// A CPU function that takes a `jaxcc::Async` parameter (by value; it carries nothing) runs
// asynchronously: its handler hands the call to XLA's intra-op thread pool and returns an FFI
// Future at once, so XLA can run independent ops meanwhile; the buffers stay alive until the
// function returns. An exception from the function fails the Future (the call's error).
#pragma once

namespace jaxcc {

/// Tag parameter: "run this function asynchronously" (docs/usage.md, Using the whole machine).
struct Async {};

}  // namespace jaxcc
