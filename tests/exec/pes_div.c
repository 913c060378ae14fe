// SPDX-License-Identifier: MIT
/* Where a sample lands under the exec count source: a hand-written kernel whose loop holds the program's only
 * integer divisions, three of them, sampled on the U74's INTEGER_DIVISION_RETIRED every PERIOD divisions
 * (exclude_kernel: the emulator's own divisions are the kernel's). Every overflow is made by one of the three
 * `div`s, and which one follows from the count: the k-th sample is the (k * PERIOD)-th division since the
 * enable, so `div` number (k * PERIOD - 1) % 3 of its iteration.
 *   pes_div ITERS PERIOD precise
 * precise: precise_ip = 2 (with RVEMU_PES=1 the PES unit records the causing PC); else an ordinary overflow
 * interrupt (Sscofpmf), whose sample is taken RVEMU_IRQ_SKID modelled cycles after the overflow.
 * Prints "samples N at_div D in_order O in_loop L outside X" and "first_pcs" (offsets from the loop start).
 */
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

extern const char pes_loop[], pes_div0[], pes_div1[], pes_div2[], pes_loop_end[];

/* ITERS iterations of 3 divisions among other work; a0 = iterations (> 0). */
__asm__(".text\n"
        ".globl pes_kernel, pes_loop, pes_div0, pes_div1, pes_div2, pes_loop_end\n"
        "pes_kernel:\n"
        "  li t1, 1000003\n"
        "  li t2, 7\n"
        "pes_loop:\n"
        "  addi t3, t1, 11\n"
        "pes_div0:\n"
        "  div t4, t3, t2\n"
        "  add t5, t4, t3\n"
        "  xor t5, t5, t1\n"
        "pes_div1:\n"
        "  divu t4, t5, t2\n"
        "  slli t6, t4, 3\n"
        "pes_div2:\n"
        "  div t4, t6, t2\n"
        "  addi a0, a0, -1\n"
        "  bnez a0, pes_loop\n"
        "pes_loop_end:\n"
        "  ret\n");
void pes_kernel(long iters);

#define RING_PAGES 64

/* Copies len bytes at pos of the ring's data area (size bytes, wrapping). */
static void ring_copy(const unsigned char *data, uint64_t size, uint64_t pos, void *out, size_t len)
{
	for (size_t i = 0; i < len; i++)
		((unsigned char *)out)[i] = data[(pos + i) % size];
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: pes_div ITERS PERIOD precise|skid\n");
		return 2;
	}
	long iters = atol(argv[1]);
	uint64_t period = strtoull(argv[2], NULL, 10);
	int precise = strcmp(argv[3], "precise") == 0;
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_RAW;
	a.config = 0x40000; /* U74 INTEGER_DIVISION_RETIRED: class 0, mask bit 10 */
	a.sample_period = period;
	a.sample_type = PERF_SAMPLE_IP;
	a.precise_ip = precise ? 2 : 0;
	a.exclude_kernel = 1;
	a.disabled = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		perror("pes_div: perf_event_open");
		return 1;
	}
	long page = sysconf(_SC_PAGESIZE);
	void *ring = mmap(NULL, (size_t)page * (RING_PAGES + 1), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		perror("pes_div: mmap");
		return 1;
	}
	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0)
		return 1;
	pes_kernel(iters);
	uint64_t count = 0;
	if (ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) != 0 || read(fd, &count, sizeof(count)) != sizeof(count))
		return 1;
	struct perf_event_mmap_page *meta = ring;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE), tail = meta->data_tail;
	const unsigned char *data = (const unsigned char *)ring + meta->data_offset;
	uint64_t size = meta->data_size;
	const uintptr_t divs[3] = {(uintptr_t)pes_div0, (uintptr_t)pes_div1, (uintptr_t)pes_div2};
	unsigned long samples = 0, at_div = 0, in_order = 0, in_loop = 0, outside = 0, lost = 0;
	char first[256] = "";
	size_t used = 0;
	for (uint64_t pos = tail; pos < head;) {
		struct perf_event_header h;
		uint64_t ip;
		ring_copy(data, size, pos, &h, sizeof(h));
		if (h.size < sizeof(h))
			break;
		if (h.type == PERF_RECORD_LOST)
			lost++;
		if (h.type == PERF_RECORD_SAMPLE) {
			ring_copy(data, size, pos + sizeof(h), &ip, sizeof(ip));
			samples++;
			uint64_t k = samples * period - 1; /* the division that made this overflow, from 0 */
			for (int d = 0; d < 3; d++)
				if (ip == divs[d]) {
					at_div++;
					in_order += (uint64_t)d == k % 3;
				}
			if (ip >= (uintptr_t)pes_loop && ip < (uintptr_t)pes_loop_end)
				in_loop++;
			else
				outside++;
			if (samples <= 6 && used < sizeof(first) - 24)
				used += (size_t)snprintf(first + used, sizeof(first) - used, " %ld",
				                         (long)(ip - (uintptr_t)pes_loop));
		}
		pos += h.size;
	}
	printf("count %llu samples %lu at_div %lu in_order %lu in_loop %lu outside %lu lost %lu\n",
	       (unsigned long long)count, samples, at_div, in_order, in_loop, outside, lost);
	printf("first_pcs%s (divs at %ld %ld %ld)\n", first, (long)(divs[0] - (uintptr_t)pes_loop),
	       (long)(divs[1] - (uintptr_t)pes_loop), (long)(divs[2] - (uintptr_t)pes_loop));
	return 0;
}
