// SPDX-License-Identifier: MIT
/* Pointer chase over a random cycle of 64-byte nodes spanning 8 MiB (four times the U74's L2): every hop is a
 * dependent load that misses the caches. The permutation comes from a fixed-seed generator: same run, same
 * counts. An argument multiplies the hops (bench/bench_exec.py). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NODES (1u << 17)
#define HOPS  (1u << 17)

struct node {
	struct node *next;
	// cppcheck-suppress unusedStructMember
	char pad[56]; /* one node per 64-byte line */
};

int main(int argc, char **argv)
{
	uint32_t hops = HOPS * (argc > 1 ? (uint32_t)atoi(argv[1]) : 1);
	struct node *nodes = calloc(NODES, sizeof(*nodes));
	uint32_t *order = malloc(NODES * sizeof(*order));
	uint64_t x = 88172645463325252ull;
	if (!nodes || !order)
		return 1;
	for (uint32_t i = 0; i < NODES; i++)
		order[i] = i;
	for (uint32_t i = NODES - 1; i > 0; i--) { /* Fisher-Yates with xorshift64 */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint32_t j = (uint32_t)(x % (i + 1)), t = order[i];
		order[i] = order[j], order[j] = t;
	}
	for (uint32_t i = 0; i < NODES; i++)
		nodes[order[i]].next = &nodes[order[(i + 1) % NODES]];
	struct node *p = &nodes[order[0]];
	for (uint32_t h = 0; h < hops; h++)
		p = p->next;
	printf("chase ended at node %ld\n", (long)(p - nodes));
	return 0;
}
