// SPDX-License-Identifier: MIT
/* Dense matrix multiply (N x N doubles, i-k-j order): regular accesses, mostly L1 hits, FMAs. An argument
 * repeats the multiply (bench/bench_exec.py makes it long enough to time). */
#include <stdio.h>
#include <stdlib.h>

#define N 48
static double a[N][N], b[N][N], c[N][N];

int main(int argc, char **argv)
{
	int repeat = argc > 1 ? atoi(argv[1]) : 1;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			a[i][j] = i + j;
			b[i][j] = i - j;
		}
	for (int r = 0; r < repeat; r++)
		for (int i = 0; i < N; i++)
			for (int k = 0; k < N; k++)
				for (int j = 0; j < N; j++)
					c[i][j] += a[i][k] * b[k][j];
	printf("gemm c[7][5] = %g\n", c[7][5]);
	return 0;
}
