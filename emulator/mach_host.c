// SPDX-License-Identifier: MIT
/* The host's real libc functions (mach_host.def lists them), resolved lazily with dlsym(RTLD_NEXT). */
#include <dirent.h>
#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mach.h"

#define EMU_REAL_DECL(ret, fn, ...) ret (*emu_real_##fn)(__VA_ARGS__)
#include "mach_host.def"
#undef EMU_REAL_DECL

void *emu_dlsym_next(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (!p) {
		fprintf(stderr, "librvemu: libc has no %s\n", name);
		abort();
	}
	return p;
}

pid_t emu_gettid(void)
{
	return (pid_t)EMU_REAL(syscall)(SYS_gettid);
}
