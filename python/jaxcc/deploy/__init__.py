"""Shipping kernels: prebuilt bundles loaded without a compiler (load_library), and jax.export
round trips that check their targets."""
