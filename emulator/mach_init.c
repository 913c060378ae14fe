// SPDX-License-Identifier: MIT
/* Load-time set-up of the machine: the configuration (which stops the program at once when it is bad),
 * then the thread registry, the model's counter bank and the count source. Every front-end entry point calls
 * emu_init(). */
#include "mach.h"
#include "mach_priv.h"

void emu_init(void)
{
	emu_cfg();
	emu_banks_init();
	emu_count_source(); /* RVEMU_COUNT_SOURCE, and for "exec" its count file: checked at load time */
	emu_run_init();     /* the run's shared table: join it or create it */
}
