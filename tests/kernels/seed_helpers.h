// Found through the loaded file's own directory on the include path.
#pragma once
namespace seed_helpers {
inline float plus_one(float v) { return v + 1.0f; }
}
