"""The jaxcc command line: cache, doctor, build, check, tune, benchmark."""
