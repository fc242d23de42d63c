"""Bridges that run kernels from other compilers (Numba, Numba-CUDA, Triton) as XLA FFI calls:
each compiles the foreign kernel, builds a small jaxcc launcher per arity and calls it natively."""
