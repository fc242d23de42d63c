"""check_kernel: the rows that run a kernel every way a user could (outputs, jit, vmap, gradients,
sharding, export, bounds) and the report."""
