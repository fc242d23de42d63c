"""From a loader's Python arguments to a loaded module: arguments checked, the frozen LoadRequest,
the debug profile, the in-process table, and one request built or fetched by the C++ core."""
