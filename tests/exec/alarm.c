// SPDX-License-Identifier: MIT
/* The count file's alarm (plugin/rvexec_shm.h) from the guest: arm it on a counter, get a signal when the
 * counter reaches the value, and find in the slot the instruction that reached it. Three alarms: the 1000th
 * fsqrt.d from now, the 777th instruction from now, the 10th L1D read miss from now; each in a loop whose
 * instructions are labelled. Prints one line per alarm for tests/exec/test_exec.py. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <ucontext.h>
#include <unistd.h>

#include "rvexec_shm.h"

extern char sqrt_loop[], sqrt_insn[], sqrt_end[], loop_first[], loop_end[], load_insn[], load_end[];
static struct rvexec_slot *slot;
static volatile sig_atomic_t handled;
static volatile uint64_t handler_pc, handler_count, handler_alarm_pc;
static unsigned watched;
static char array[1 << 20];

static void on_alarm(int sig, siginfo_t *si, void *ctx)
{
	(void)sig, (void)si;
	handler_pc = ((ucontext_t *)ctx)->uc_mcontext.__gregs[REG_PC];
	handler_alarm_pc = __atomic_load_n(&slot->alarm_pc, __ATOMIC_ACQUIRE);
	handler_count = slot->counts[RVEXEC_MODE_USER][watched];
	handled++;
}

static uint64_t arm(unsigned count, uint64_t ahead)
{
	uint64_t at = slot->counts[RVEXEC_MODE_USER][count] + ahead;
	handled = 0;
	watched = count;
	uint64_t gen = rvexec_alarm_begin(slot);
	__atomic_store_n(&slot->alarm_count, count, __ATOMIC_RELAXED);
	__atomic_store_n(&slot->alarm_at, at, __ATOMIC_RELAXED);
	rvexec_alarm_publish(slot, gen, SIGUSR1);
	return at;
}

/* insn: the instruction that must have reached the count (NULL: any of the loop's) */
static void report(const char *what, uint64_t at, const char *first, const char *end, const char *insn)
{
	printf("%s handled=%d fired=%llu at=%llu count_in_handler=%llu alarm_pc=%#llx handler_pc=%#llx "
	       "region=%#llx..%#llx insn=%#llx\n",
	       what, (int)handled, (unsigned long long)slot->alarm_fired, (unsigned long long)at,
	       (unsigned long long)handler_count, (unsigned long long)handler_alarm_pc,
	       (unsigned long long)handler_pc, (unsigned long long)(uintptr_t)first,
	       (unsigned long long)(uintptr_t)end, (unsigned long long)(uintptr_t)insn);
}

int main(void)
{
	const char *path = getenv(RVEXEC_SHM_ENV);
	struct stat st;
	int fd = path ? open(path, O_RDWR) : -1;
	if (fd < 0 || fstat(fd, &st) != 0)
		return 1;
	struct rvexec_shm_header *h =
	    mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED || h->magic != RVEXEC_SHM_MAGIC || h->slot_size != sizeof(struct rvexec_slot))
		return 1;
	for (uint32_t i = 0; i < h->nslots && !slot; i++)
		if (rvexec_shm_slot(h, i)->tid == (uint32_t)gettid())
			slot = rvexec_shm_slot(h, i);
	struct sigaction sa = {.sa_sigaction = on_alarm, .sa_flags = SA_SIGINFO};
	if (!slot || sigaction(SIGUSR1, &sa, NULL) != 0)
		return 1;

	uint64_t at = arm(RVEXEC_FP_SQRT, 1000);
	double x = 2.0;
	long n = 5000;
	__asm__ volatile(".globl sqrt_loop, sqrt_insn, sqrt_end\n"
	                 "sqrt_loop: addi t0, t0, 1\n"
	                 "sqrt_insn: fsqrt.d %1, %1\n"
	                 "   addi %0, %0, -1\n"
	                 "   bnez %0, sqrt_loop\n"
	                 "sqrt_end:\n"
	                 : "+r"(n), "+f"(x)
	                 :
	                 : "t0");
	report("fp_sqrt", at, sqrt_loop, sqrt_end, sqrt_insn);

	at = arm(RVEXEC_INSTRET, 777);
	n = 5000;
	__asm__ volatile(".globl loop_first, loop_end\n"
	                 "loop_first: addi t0, t0, 1\n"
	                 "   xor t1, t1, t0\n"
	                 "   addi %0, %0, -1\n"
	                 "   bnez %0, loop_first\n"
	                 "loop_end:\n"
	                 : "+r"(n)
	                 :
	                 : "t0", "t1");
	report("instret", at, loop_first, loop_end, NULL);

	at = arm(RVEXEC_L1D_READ_MISS, 10);
	char *p = array;
	n = sizeof(array) / 64;
	__asm__ volatile(".globl load_insn, load_end\n"
	                 "load_insn: lbu t0, 0(%1)\n"
	                 "   addi %1, %1, 64\n"
	                 "   addi %0, %0, -1\n"
	                 "   bnez %0, load_insn\n"
	                 "load_end:\n"
	                 : "+r"(n), "+r"(p)
	                 :
	                 : "t0", "memory");
	report("l1d_read_miss", at, load_insn, load_end, load_insn);
	return 0;
}
