"""The public loaders, load_cpp_* and load_cuda_*: a tuned or plain load of sources."""
