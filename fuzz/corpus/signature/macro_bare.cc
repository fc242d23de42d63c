// @BE f_f32
GEN(_f32, float)
