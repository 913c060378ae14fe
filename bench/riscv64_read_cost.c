// SPDX-License-Identifier: MIT
/* The guest instructions of one PAPI_read on riscv64, through the mmap page (PAPI patch 25: csrr of the
 * counter, trapped into the emulator under qemu-user) and through read() (perf_user_access = 0), and of one
 * trapped CSR access. A riscv64 program for qemu-riscv64 with the riscv64 librvemu.so preloaded (model
 * sifive-u74); bench/riscv64-read-cost.sh runs it under qemu's instruction trace and counts.
 *
 * It prints the executable ranges of every loaded object ("object NAME START END"), then runs numbered
 * regions, each between calls of bench_region_begin() and bench_region_end(); the script counts the
 * instructions executed in each region, split by object (librvemu.so is the emulated kernel's side). */
#include <link.h>
#include <papi.h>
#include <stdio.h>
#include <string.h>

#if !defined(__riscv) || __riscv_xlen != 64
// cppcheck-suppress preprocessorErrorDirective
#error "a riscv64 program (run under qemu-riscv64 by bench/riscv64-read-cost.sh)"
#endif

#define REPS 16

__attribute__((noinline)) void bench_region_begin(int id)
{
	__asm__ __volatile__("" ::"r"(id) : "memory");
}

__attribute__((noinline)) void bench_region_end(int id)
{
	__asm__ __volatile__("" ::"r"(id) : "memory");
}

static int print_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		unsigned long start = info->dlpi_addr + ph->p_vaddr;
		const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "program";
		const char *base = strrchr(name, '/');
		printf("object %s 0x%lx 0x%lx\n", base ? base + 1 : name, start, start + ph->p_memsz);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int page = argc > 1 && strcmp(argv[1], "page") == 0;
	int es = PAPI_NULL;
	long long v = 0;

	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT || PAPI_create_eventset(&es) != PAPI_OK ||
	    PAPI_add_named_event(es, "riscv_sifive_u74::INTEGER_LOAD_RETIRED") != PAPI_OK ||
	    PAPI_start(es) != PAPI_OK) {
		fprintf(stderr, "riscv64_read_cost: PAPI setup failed\n");
		return 1;
	}
	const PAPI_component_info_t *ci = PAPI_get_component_info(0);
	if (ci == NULL || (int)ci->fast_counter_read != page) {
		fprintf(stderr, "riscv64_read_cost: fast_counter_read %d, expected %d\n",
		        ci ? (int)ci->fast_counter_read : -1, page);
		return 1;
	}
	for (int i = 0; i < 4; i++) /* warm: lazy binding, first touches */
		PAPI_read(es, &v);
	dl_iterate_phdr(print_object, NULL);
	printf("region 0 empty 1\nregion 1 PAPI_read %d\n", REPS);
	if (page)
		printf("region 2 csrr_hpmcounter3 %d\n", REPS);
	fflush(stdout);

	bench_region_begin(0);
	bench_region_end(0);
	bench_region_begin(1);
	for (int i = 0; i < REPS; i++)
		PAPI_read(es, &v);
	bench_region_end(1);
	if (page) {
		/* the counter of the mapped event (index 4 on the page): what patch 25's read executes */
		unsigned long c = 0;
		bench_region_begin(2);
		for (int i = 0; i < REPS; i++)
			__asm__ __volatile__("csrr %0, 0xc03" : "=r"(c)::"memory");
		bench_region_end(2);
		(void)c;
	}
	PAPI_stop(es, &v);
	return 0;
}
