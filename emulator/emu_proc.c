// SPDX-License-Identifier: MIT
/* The files through which Linux describes the machine: /proc/cpuinfo in the RISC-V kernel's format
 * (arch/riscv/kernel/cpu.c), the perf sysctls, and the /sys/devices/system/{cpu,node} entries PAPI reads.
 * Served from memfds through the interposed open/fopen/access family; everything else is forwarded.
 * Not covered: glibc-internal opens (e.g. inside sysconf; we answer sysconf/get_nprocs directly),
 * stat() and opendir() (PAPI only uses access() and fopen() on these paths). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "emu_priv.h"

static FILE *(*emu_real_fopen)(const char *, const char *);
static FILE *(*emu_real_fopen64)(const char *, const char *);
static int (*emu_real_open)(const char *, int, ...);
static int (*emu_real_open64)(const char *, int, ...);
static int (*emu_real_openat)(int, const char *, int, ...);
static int (*emu_real_openat64)(int, const char *, int, ...);
static int (*emu_real___open_2)(const char *, int);
static int (*emu_real___open64_2)(const char *, int);
static int (*emu_real___openat_2)(int, const char *, int);
static int (*emu_real___openat64_2)(int, const char *, int);
static int (*emu_real_access)(const char *, int);
static int (*emu_real_faccessat)(int, const char *, int, int);
static long (*emu_real_sysconf)(int);

struct vbuf {
	char text[16384];
	size_t len;
};

static void vprint(struct vbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void vprint(struct vbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b->text + b->len, sizeof(b->text) - b->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->len += (size_t)n < sizeof(b->text) - b->len ? (size_t)n : sizeof(b->text) - b->len - 1;
}

/* The isa string: the model's, plus _sscofpmf when the option is on. */
static void isa_string(char *out, size_t cap)
{
	snprintf(out, cap, "%s%s", emu_model()->isa, emu_sscofpmf() ? "_sscofpmf" : "");
}

/* Hart ids: on the U74-MC hart 0 is the S7 monitor core Linux does not run on, so CPU n is hart n+1. */
static unsigned hart_id(unsigned cpu)
{
	return cpu + (strcmp(emu_model()->model, "sifive-u74") == 0 ? 1 : 0);
}

static void gen_cpuinfo(struct vbuf *b)
{
	const struct rvemu_model *m = emu_model();
	char isa[256];
	isa_string(isa, sizeof(isa));
	for (unsigned cpu = 0; cpu < emu_nharts(); cpu++) {
		vprint(b, "processor\t: %u\nhart\t\t: %u\nisa\t\t: %s\nmmu\t\t: %s\nuarch\t\t: %s\n", cpu,
		       hart_id(cpu), isa, m->mmu, m->uarch);
		vprint(b, "mvendorid\t: %s\nmarchid\t\t: %s\nmimpid\t\t: %s\nhart isa\t: %s\n\n",
		       m->mvendorid, m->marchid, m->mimpid, isa);
	}
}

/* cpumask as the kernel prints it (%*pb): hex, 32-bit groups separated by commas. */
static void print_mask(struct vbuf *b, unsigned first, unsigned count)
{
	unsigned n = emu_nharts(), groups = (n + 31) / 32;
	for (unsigned g = groups; g-- > 0;) {
		uint32_t word = 0;
		for (unsigned bit = 0; bit < 32; bit++) {
			unsigned cpu = g * 32 + bit;
			if (cpu >= first && cpu < first + count)
				word |= 1u << bit;
		}
		unsigned width = g == groups - 1 ? ((n - g * 32) + 3) / 4 : 8;
		vprint(b, "%0*x%s", (int)width, word, g ? "," : "\n");
	}
}

static void print_range(struct vbuf *b)
{
	if (emu_nharts() == 1)
		vprint(b, "0\n");
	else
		vprint(b, "0-%u\n", emu_nharts() - 1);
}

#define SYS_CPU  "/sys/devices/system/cpu/"
#define SYS_NODE "/sys/devices/system/node/"

/* Per-CPU files: 1 served, 0 not ours (forward), -ENOENT for a CPU this machine does not have. */
static int gen_sys_cpu(const char *rest, struct vbuf *b, int *is_dir)
{
	char *end;
	unsigned long cpu = strtoul(rest, &end, 10);
	if (end == rest || (*end && *end != '/'))
		return 0;
	if (cpu >= emu_nharts())
		return -ENOENT;
	const char *f = *end ? end + 1 : "";
	unsigned khz = emu_model()->freq_mhz * 1000u;
	if (!*f || !strcmp(f, "topology") || !strcmp(f, "cpufreq"))
		*is_dir = 1;
	else if (!strcmp(f, "topology/thread_siblings"))
		print_mask(b, (unsigned)cpu, 1);
	else if (!strcmp(f, "topology/core_siblings") || !strcmp(f, "topology/package_cpus"))
		print_mask(b, 0, emu_nharts());
	else if (!strcmp(f, "topology/thread_siblings_list"))
		vprint(b, "%lu\n", cpu);
	else if (!strcmp(f, "topology/core_id"))
		vprint(b, "%lu\n", cpu);
	else if (!strcmp(f, "topology/physical_package_id"))
		vprint(b, "0\n");
	else if (!strcmp(f, "online"))
		vprint(b, "1\n");
	else if (!strcmp(f, "cpufreq/cpuinfo_max_freq") || !strcmp(f, "cpufreq/cpuinfo_min_freq") ||
	         !strcmp(f, "cpufreq/scaling_cur_freq"))
		vprint(b, "%u\n", khz);
	else
		return 0;
	return 1;
}

static int gen_sys_node(const char *rest, struct vbuf *b, int *is_dir)
{
	if (!strcmp(rest, "online") || !strcmp(rest, "possible")) {
		vprint(b, "0\n");
		return 1;
	}
	if (strncmp(rest, "node", 4))
		return 0;
	char *end;
	unsigned long node = strtoul(rest + 4, &end, 10);
	if (end == rest + 4 || (*end && *end != '/'))
		return 0;
	if (node != 0)
		return -ENOENT;
	if (!*end)
		*is_dir = 1;
	else if (!strcmp(end, "/cpumap"))
		print_mask(b, 0, emu_nharts());
	else if (!strcmp(end, "/cpulist"))
		print_range(b);
	else
		return 0;
	return 1;
}

/* 1: `path` is ours and b holds its text (or *is_dir); 0: not ours; -ENOENT: hidden host entry. */
static int virtual_file(const char *path, struct vbuf *b, int *is_dir)
{
	*is_dir = 0;
	b->len = 0;
	b->text[0] = 0;
	if (!path)
		return 0;
	if (!strcmp(path, "/proc/cpuinfo"))
		gen_cpuinfo(b);
	else if (!strcmp(path, "/proc/sys/kernel/perf_event_paranoid"))
		vprint(b, "2\n"); /* a user may count its own threads; CPU-wide counting is refused */
	else if (!strcmp(path, "/proc/sys/kernel/nmi_watchdog"))
		vprint(b, "0\n");
	else if (!strcmp(path, "/proc/sys/kernel/perf_event_max_sample_rate"))
		vprint(b, "100000\n");
	else if (!strcmp(path, "/proc/sys/kernel/perf_event_mux_interval_ms") ||
	         !strcmp(path, "/sys/bus/event_source/devices/cpu/perf_event_mux_interval_ms"))
		vprint(b, "%llu\n", (unsigned long long)(emu_cycles_to_ns(emu_mux_cycles()) / 1000000u));
	else if (!strcmp(path, SYS_CPU "online") || !strcmp(path, SYS_CPU "possible") ||
	         !strcmp(path, SYS_CPU "present"))
		print_range(b);
	else if (!strcmp(path, SYS_CPU "offline"))
		vprint(b, "\n");
	else if (!strncmp(path, SYS_CPU "cpu", sizeof(SYS_CPU "cpu") - 1))
		return gen_sys_cpu(path + sizeof(SYS_CPU "cpu") - 1, b, is_dir);
	else if (!strncmp(path, SYS_NODE, sizeof(SYS_NODE) - 1))
		return gen_sys_node(path + sizeof(SYS_NODE) - 1, b, is_dir);
	else
		return 0;
	return 1;
}

/* Opens a served file: a memfd holding its text, positioned at 0. Returns -2 when the path is not ours. */
static int open_virtual(const char *path, int flags)
{
	/* Every open of the program comes through here: leave anything outside /proc and /sys at once. */
	if (!path || (strncmp(path, "/proc/", 6) != 0 && strncmp(path, "/sys/", 5) != 0))
		return -2;
	struct vbuf *b = malloc(sizeof(*b));
	int is_dir, fd;
	if (!b)
		return -2;
	int r = virtual_file(path, b, &is_dir);
	if (r == 0 || (r == 1 && is_dir)) {
		free(b);
		return -2; /* directories: the host's (or ENOENT) */
	}
	EMU_STAT_ADD(syscalls_emulated, 1);
	if (r < 0) {
		free(b);
		errno = -r;
		return -1;
	}
	if ((flags & O_ACCMODE) != O_RDONLY) {
		free(b);
		errno = EACCES; /* root-only sysctls and read-only sysfs files */
		return -1;
	}
	fd = memfd_create("rvemu-proc", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
	if (fd >= 0 && (write(fd, b->text, b->len) != (ssize_t)b->len || lseek(fd, 0, SEEK_SET) != 0)) {
		EMU_REAL(close)(fd);
		fd = -1;
	}
	free(b);
	return fd;
}

static int open_flags_of_mode(const char *mode)
{
	int f = strchr(mode, '+') ? O_RDWR : (mode[0] == 'r' ? O_RDONLY : O_WRONLY);
	return f | (strchr(mode, 'e') ? O_CLOEXEC : 0);
}

static FILE *fopen_common(FILE *(*real)(const char *, const char *), const char *path, const char *mode)
{
	emu_init();
	int fd = mode ? open_virtual(path, open_flags_of_mode(mode)) : -2;
	if (fd == -2)
		return real(path, mode);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "r");
	if (!f)
		EMU_REAL(close)(fd);
	return f;
}

EMU_EXPORT FILE *fopen(const char *path, const char *mode)
{
	return fopen_common(EMU_REAL(fopen), path, mode);
}

EMU_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	return fopen_common(EMU_REAL(fopen64), path, mode);
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

/* Only absolute paths are served (relative ones cannot name /proc or /sys unless cwd is there). */
static int at_virtual(int dirfd, const char *path, int flags)
{
	(void)dirfd;
	emu_init();
	return path && path[0] == '/' ? open_virtual(path, flags) : -2;
}

EMU_EXPORT int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t m = mode_arg(flags, ap);
	va_end(ap);
	int fd = at_virtual(AT_FDCWD, path, flags);
	return fd != -2 ? fd : EMU_REAL(open)(path, flags, m);
}

EMU_EXPORT int open64(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t m = mode_arg(flags, ap);
	va_end(ap);
	int fd = at_virtual(AT_FDCWD, path, flags);
	return fd != -2 ? fd : EMU_REAL(open64)(path, flags, m);
}

EMU_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t m = mode_arg(flags, ap);
	va_end(ap);
	int fd = at_virtual(dirfd, path, flags);
	return fd != -2 ? fd : EMU_REAL(openat)(dirfd, path, flags, m);
}

EMU_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t m = mode_arg(flags, ap);
	va_end(ap);
	int fd = at_virtual(dirfd, path, flags);
	return fd != -2 ? fd : EMU_REAL(openat64)(dirfd, path, flags, m);
}

/* _FORTIFY_SOURCE variants. */
EMU_EXPORT int __open_2(const char *path, int flags)
{
	int fd = at_virtual(AT_FDCWD, path, flags);
	return fd != -2 ? fd : EMU_REAL(__open_2)(path, flags);
}

EMU_EXPORT int __open64_2(const char *path, int flags)
{
	int fd = at_virtual(AT_FDCWD, path, flags);
	return fd != -2 ? fd : EMU_REAL(__open64_2)(path, flags);
}

EMU_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	int fd = at_virtual(dirfd, path, flags);
	return fd != -2 ? fd : EMU_REAL(__openat_2)(dirfd, path, flags);
}

EMU_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	int fd = at_virtual(dirfd, path, flags);
	return fd != -2 ? fd : EMU_REAL(__openat64_2)(dirfd, path, flags);
}

/* access(): 1 = answered (result in *r), 0 = forward. */
static int access_virtual(const char *path, int amode, int *r)
{
	if (!path || (strncmp(path, "/proc/", 6) != 0 && strncmp(path, "/sys/", 5) != 0))
		return 0;
	struct vbuf *b = malloc(sizeof(*b));
	int is_dir;
	if (!b)
		return 0;
	emu_init();
	int v = virtual_file(path, b, &is_dir);
	free(b);
	if (v == 0)
		return 0;
	if (v < 0) {
		errno = -v;
		*r = -1;
	} else if ((amode & W_OK) || ((amode & X_OK) && !is_dir)) {
		errno = EACCES;
		*r = -1;
	} else {
		*r = 0;
	}
	return 1;
}

EMU_EXPORT int access(const char *path, int amode)
{
	int r;
	return access_virtual(path, amode, &r) ? r : EMU_REAL(access)(path, amode);
}

EMU_EXPORT int faccessat(int dirfd, const char *path, int amode, int flags)
{
	int r;
	return access_virtual(path, amode, &r) ? r : EMU_REAL(faccessat)(dirfd, path, amode, flags);
}

/* The number of CPUs: glibc reads /sys internally where we cannot see it, so answer here. */
EMU_EXPORT long sysconf(int name)
{
	if (name == _SC_NPROCESSORS_ONLN || name == _SC_NPROCESSORS_CONF)
		return (long)emu_nharts();
	return EMU_REAL(sysconf)(name);
}

EMU_EXPORT int get_nprocs(void)
{
	return (int)emu_nharts();
}

EMU_EXPORT int get_nprocs_conf(void)
{
	return (int)emu_nharts();
}
