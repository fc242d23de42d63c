"""Autotuning, above building: tune= declarations, one build per configuration, timing and
choosing per shape, decisions stored in the cache, tuned bundles."""
