#pragma once
// Shared by every kernel of the directory: editing it must rebuild all of them.
#define CUDA_DIR_BLOCK 128
