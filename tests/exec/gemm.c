// SPDX-License-Identifier: MIT
/* Dense matrix multiply (N x N doubles, i-k-j order): regular accesses, mostly L1 hits, FMAs. */
#include <stdio.h>

#define N 48
static double a[N][N], b[N][N], c[N][N];

int main(void)
{
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			a[i][j] = i + j;
			b[i][j] = i - j;
		}
	for (int i = 0; i < N; i++)
		for (int k = 0; k < N; k++)
			for (int j = 0; j < N; j++)
				c[i][j] += a[i][k] * b[k][j];
	printf("gemm c[7][5] = %g\n", c[7][5]);
	return 0;
}
