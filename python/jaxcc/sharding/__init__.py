"""How a kernel call stays split across devices: the sharding rule, the checks that warn where XLA
would gather, and the batch-partitionable path."""
