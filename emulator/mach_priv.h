/* SPDX-License-Identifier: MIT */
/* Between the machine layer's own files only. */
#ifndef EMU_MACH_PRIV_H
#define EMU_MACH_PRIV_H
#include "mach.h"

void emu_threads_init(void); /* fork handlers of the registry */
void emu_banks_init(void);   /* the active model's bank, after the configuration */
/* mach_thread_new.c: a zeroed thread record with its ids, hart and injection counters (aborts without memory)
 */
struct emu_thread *emu_thread_new(pid_t tid, pid_t pid, unsigned hart);
/* mach_count_exec.c: the exec count source, and its set-up (opens $RVEXEC_SHM; a bad file stops the program)
 */
extern const struct emu_count_source emu_exec_source;
void emu_exec_source_init(void);
/* a bank event's handle among the exec source's event maps, -1: none (emu_exec_bank_event, mach_count.c) */
int emu_exec_event_handle(const char *event);

#endif
