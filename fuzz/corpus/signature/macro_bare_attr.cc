// @BE f_f32 arg ret attr.v
GEN(_f32, float)
