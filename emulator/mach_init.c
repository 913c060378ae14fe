// SPDX-License-Identifier: MIT
/* Load-time set-up of the machine: the configuration (which stops the program at once when it is bad),
 * then the thread registry and the model's counter bank. Every front-end entry point calls emu_init(). */
#include "mach.h"
#include "mach_priv.h"

void emu_init(void)
{
	emu_cfg();
	emu_banks_init();
}
