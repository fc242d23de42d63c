/* // @BE a arg ret */
/*
// @BE b arg ret
*/
const char* s = "// @BE c arg ret";
const char* r = R"(
// @BE d arg ret
)";
#define X 1 // @BE e arg ret
#if 0
// @BE f arg ret
#endif
// @BE real arg ret
void real(const Tensor& x, Tensor& y) {}
