#define X0 a a
#define X1 X0 X0
#define X2 X1 X1
#define X3 X2 X2
#define X4 X3 X3
#define X5 X4 X4
#define X6 X5 X5
#define X7 X6 X6
// @BE f
X7
#define F(x) x
F(F(F(F(F(F(1))))))
