// SPDX-License-Identifier: MIT
/* Seam 2 under the emulator: librvemu.so exports the rvhw_* symbols of lib/rvhw.h, so under LD_PRELOAD
 * they take precedence over librvhw's and every CSR access / BOOM hint lands here. Arguments are checked
 * exactly as lib/rvhw.c checks them (lib/rvhw_known.h), then the access goes to the active model's bank;
 * a model without that bank answers RVHW_ENOHW, like a machine without the CSR. */
#include "emu_bank.h"
#include "emu_core.h"
#include "rvhw.h"
#include "rvhw_known.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The time CSR counts at the platform timebase; 1 MHz is what the HiFive Unmatched's device tree says. */
#define EMU_TIMEBASE_HZ 1000000ull

static uint64_t instret_now(void)
{
	uint64_t count = 0;
	const struct rvemu_model *model = emu_model();

	/* The core owns the instruction count (it includes injected events). */
	if (rvemu_truth("INSTRUCTIONS", &count) == 0)
		return count;
	return model->nevents > 1 ? emu_scale(emu_thread_cycles(), model->events[1].ppb) : 0;
}

static uint64_t time_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * EMU_TIMEBASE_HZ +
	       (uint64_t)ts.tv_nsec / (1000000000ull / EMU_TIMEBASE_HZ);
}

int rvhw_csr_read(unsigned csr, uint64_t *value)
{
	if (value == NULL || !rvhw_csr_known(csr))
		return RVHW_EINVAL;
	EMU_STAT_ADD(csr_reads, 1);
	switch (csr) {
	case RVHW_CSR_CYCLE:
		*value = emu_thread_cycles();
		return RVHW_OK;
	case RVHW_CSR_TIME:
		*value = time_now();
		return RVHW_OK;
	case RVHW_CSR_INSTRET:
		*value = instret_now();
		return RVHW_OK;
	default:
		return emu_hpc_present() ? emu_hpc_csr_read(csr, value) : RVHW_ENOHW;
	}
}

int rvhw_csr_write(unsigned csr, uint64_t value)
{
	if (!rvhw_csr_known(csr))
		return RVHW_EINVAL;
	if (!rvhw_csr_user_writable(csr))
		return RVHW_EPERM;
	EMU_STAT_ADD(csr_writes, 1);
	return emu_hpc_present() ? emu_hpc_csr_write(csr, value) : RVHW_ENOHW;
}

int rvhw_boom_op(unsigned tag, uint64_t in, uint64_t *out)
{
	if (!rvhw_boom_tag_known(tag))
		return RVHW_EINVAL;
	if (out == NULL && rvhw_boom_tag_returns(tag))
		return RVHW_EINVAL;
	EMU_STAT_ADD(boom_ops, 1);
	return emu_boom_present() ? emu_boom_hint(tag, in, out) : RVHW_ENOHW;
}

const char *rvhw_backend(void)
{
	return "emulator";
}

uint64_t emu_bank_env_u64(const char *name, uint64_t def, uint64_t min, uint64_t max)
{
	const char *text = getenv(name);
	char *end = NULL;
	unsigned long long v;

	if (text == NULL || *text == '\0')
		return def;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno != 0 || *end != '\0' || text[0] == '-' || v < min || v > max) {
		fprintf(stderr, "rvemu: %s=%s is not a number in [%llu, %llu]\n", name, text,
		        (unsigned long long)min, (unsigned long long)max);
		exit(2);
	}
	return v;
}

void emu_banks_init(void)
{
	emu_hpc_init();
	emu_boom_init();
}
