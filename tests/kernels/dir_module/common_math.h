// Shared by both files of the directory module.
#pragma once
inline float twice(float v) { return 2.0f * v; }
