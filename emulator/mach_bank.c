// SPDX-License-Identifier: MIT
/* The registry of counter banks (reached through seam 2, not perf_event): the model's bank_pmu column
 * names the one a machine has. A new bank is a struct emu_bank in its own bank_*.c and a line here. */
#include <pthread.h>
#include <string.h>

#include "mach.h"
#include "mach_priv.h"

extern const struct emu_bank emu_bank_hpc, emu_bank_boom;
static const struct emu_bank *const banks[] = {&emu_bank_hpc, &emu_bank_boom};
static const struct emu_bank *active;
static pthread_once_t banks_once = PTHREAD_ONCE_INIT;

/* The registry's fork handlers first, then the bank's: see emu_threads_init. */
static void banks_init(void)
{
	emu_threads_init();
	const char *pmu = emu_model()->bank_pmu;
	if (!pmu || !*pmu)
		return;
	for (size_t i = 0; i < sizeof(banks) / sizeof(banks[0]); i++)
		if (strcmp(banks[i]->pmu, pmu) == 0)
			active = banks[i];
	if (!active)
		emu_config_error("model '%s' names bank '%s', which no bank model implements",
		                 emu_model()->model, pmu);
	active->init();
}

void emu_banks_init(void)
{
	pthread_once(&banks_once, banks_init);
}

const struct emu_bank *emu_bank_active(void)
{
	emu_banks_init();
	return active;
}
