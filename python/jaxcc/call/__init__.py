"""A loaded kernel as a JAX callable: the module and its functions, attribute and dtype checks at
the call, scratch, and the FFI targets registered with JAX."""
