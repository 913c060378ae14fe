/* SPDX-License-Identifier: MIT */
/* Between the machine layer's own files only. */
#ifndef EMU_MACH_PRIV_H
#define EMU_MACH_PRIV_H
#include "mach.h"

void emu_threads_init(void); /* fork handlers of the registry */
void emu_banks_init(void);   /* the active model's bank, after the configuration */

#endif
