"""The process's surroundings, read without building anything: where the cache lives, the tools
and GPUs a build would use, and the progress line of long builds."""
