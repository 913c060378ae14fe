// SPDX-License-Identifier: MIT
/* The /proc and /sys front end: the path-based libc calls through which a program reads the files Linux
 * describes the machine with. open/open64/openat/openat64 and their _FORTIFY_SOURCE __open*_2 variants,
 * fopen/fopen64, access/faccessat answer a served path with a memfd holding its text (fe_files.c says what
 * each file contains); opendir/readdir/readdir64/closedir list the /sys directories whose entries the
 * machine defines; sysconf/get_nprocs/get_nprocs_conf answer the number of harts. Every other path goes to
 * libc unchanged. The perf file descriptors are fe_libc.c's.
 *
 * Lock order (docs/emulator-core.md): maps_lock (fe_libc.c) -> dirs_lock (here; a leaf: held around no
 * other lock) -> perf lock -> bank locks -> thread registry. fe_libc.c's one fork_prepare takes them all in
 * that order, dirs_lock through fe_vfs_fork_lock().
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fe.h"
#include "mach.h"

static long fail(int err)
{
	errno = err;
	return -1;
}

/* Served directories' table lock: the only lock of this file. */
static pthread_mutex_t dirs_lock = PTHREAD_MUTEX_INITIALIZER;

void fe_vfs_fork_lock(void)
{
	pthread_mutex_lock(&dirs_lock);
}

void fe_vfs_fork_unlock(void)
{
	pthread_mutex_unlock(&dirs_lock);
}

/* ----------------------------------------------------------------------------- /proc and /sys files */
/* Opens a served file: a memfd holding its text, positioned at 0. Returns -2 when the path is not ours. */
static int open_virtual(const char *path, int flags)
{
	/* Every open of the program comes through here: leave anything outside /proc and /sys at once. */
	if (!path || (strncmp(path, "/proc/", 6) != 0 && strncmp(path, "/sys/", 5) != 0))
		return -2;
	struct fe_answer *own;
	const struct fe_answer *a = fe_file_answer(path, &own);
	int r = a->result, fd;
	if (r == 0 || (r == 1 && a->is_dir)) {
		free(own);
		return -2; /* directories: the host's (or ENOENT) */
	}
	EMU_STAT_ADD(syscalls_emulated, 1);
	if (r < 0) {
		free(own);
		return (int)fail(-r);
	}
	if ((flags & O_ACCMODE) != O_RDONLY) {
		free(own);
		return (int)fail(EACCES); /* root-only sysctls and read-only sysfs files */
	}
	fd = memfd_create("rvemu-proc", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
	/* pwrite leaves the offset at 0: two host calls per open */
	if (fd >= 0 && a->len && pwrite(fd, a->text, a->len, 0) != (ssize_t)a->len) {
		EMU_REAL(close)(fd);
		fd = -1;
	}
	free(own);
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
static int at_virtual(const char *path, int flags)
{
	emu_init();
	return path && path[0] == '/' ? open_virtual(path, flags) : -2;
}

#define OPEN_INTERPOSER(name, ...)                                                                           \
	{                                                                                                    \
		va_list ap;                                                                                  \
		va_start(ap, flags);                                                                         \
		mode_t m = mode_arg(flags, ap);                                                              \
		va_end(ap);                                                                                  \
		int fd = at_virtual(path, flags);                                                            \
		return fd != -2 ? fd : EMU_REAL(name)(__VA_ARGS__, m);                                       \
	}

EMU_EXPORT int open(const char *path, int flags, ...) OPEN_INTERPOSER(open, path, flags) EMU_EXPORT
    int open64(const char *path, int flags, ...) OPEN_INTERPOSER(open64, path, flags) EMU_EXPORT
    int openat(int dirfd, const char *path, int flags, ...)
        OPEN_INTERPOSER(openat, dirfd, path, flags) EMU_EXPORT
    int openat64(int dirfd, const char *path, int flags, ...) OPEN_INTERPOSER(openat64, dirfd, path, flags)

    /* _FORTIFY_SOURCE variants. */
    EMU_EXPORT int __open_2(const char *path, int flags)
{
	int fd = at_virtual(path, flags);
	return fd != -2 ? fd : EMU_REAL(__open_2)(path, flags);
}

EMU_EXPORT int __open64_2(const char *path, int flags)
{
	int fd = at_virtual(path, flags);
	return fd != -2 ? fd : EMU_REAL(__open64_2)(path, flags);
}

EMU_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	int fd = at_virtual(path, flags);
	return fd != -2 ? fd : EMU_REAL(__openat_2)(dirfd, path, flags);
}

EMU_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	int fd = at_virtual(path, flags);
	return fd != -2 ? fd : EMU_REAL(__openat64_2)(dirfd, path, flags);
}

/* access(): 1 = answered (result in *r), 0 = forward. */
static int access_virtual(const char *path, int amode, int *r)
{
	if (!path || (strncmp(path, "/proc/", 6) != 0 && strncmp(path, "/sys/", 5) != 0))
		return 0;
	emu_init();
	struct fe_answer *own;
	const struct fe_answer *a = fe_file_answer(path, &own);
	int v = a->result, is_dir = a->is_dir;
	free(own);
	if (v == 0)
		return 0;
	if (v < 0) {
		*r = (int)fail(-v);
	} else if ((amode & W_OK) || ((amode & X_OK) && !is_dir)) {
		*r = (int)fail(EACCES);
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

/* Directories whose listing the machine defines (fe_dir_listing): a real DIR handle (of "/") stands for
 * the directory, and readdir answers with the served entries. */
struct served_dir {
	DIR *dir;
	int n, next;
	char names[16][FE_NAME_MAX];
	struct dirent ent;
	struct dirent64 ent64;
};
#define MAX_SERVED_DIRS 16
static struct served_dir *served_dirs[MAX_SERVED_DIRS]; /* under dirs_lock */

static struct served_dir *served_of(const DIR *d)
{
	struct served_dir *r = NULL;
	pthread_mutex_lock(&dirs_lock);
	for (int i = 0; i < MAX_SERVED_DIRS && !r; i++)
		if (served_dirs[i] && served_dirs[i]->dir == d)
			r = served_dirs[i];
	pthread_mutex_unlock(&dirs_lock);
	return r;
}

EMU_EXPORT DIR *opendir(const char *path)
{
	emu_init();
	struct served_dir *sd = !strncmp(path, "/sys/", 5) ? calloc(1, sizeof(*sd)) : NULL;
	if (!sd)
		// cppcheck-suppress CastIntegerToAddressAtReturn
		return EMU_REAL(opendir)(path);
	sd->n = fe_dir_listing(path, sd->names, 16);
	if (sd->n == 0) {
		free(sd);
		// cppcheck-suppress CastIntegerToAddressAtReturn
		return EMU_REAL(opendir)(path);
	}
	if (sd->n < 0) {
		int err = -sd->n;
		free(sd);
		errno = err;
		return NULL;
	}
	sd->dir = EMU_REAL(opendir)("/");
	pthread_mutex_lock(&dirs_lock);
	int slot = -1;
	for (int i = 0; i < MAX_SERVED_DIRS && slot < 0; i++)
		if (!served_dirs[i])
			slot = i;
	if (slot >= 0 && sd->dir)
		served_dirs[slot] = sd;
	pthread_mutex_unlock(&dirs_lock);
	if (slot < 0 || !sd->dir) {
		if (sd->dir)
			EMU_REAL(closedir)(sd->dir);
		free(sd);
		errno = EMFILE;
		return NULL;
	}
	EMU_STAT_ADD(syscalls_emulated, 1);
	return sd->dir;
}

EMU_EXPORT struct dirent *readdir(DIR *d)
{
	struct served_dir *sd = served_of(d);
	if (!sd)
		// cppcheck-suppress CastIntegerToAddressAtReturn
		return EMU_REAL(readdir)(d);
	if (sd->next >= sd->n)
		return NULL;
	memset(&sd->ent, 0, sizeof(sd->ent));
	sd->ent.d_type = DT_DIR;
	snprintf(sd->ent.d_name, sizeof(sd->ent.d_name), "%s", sd->names[sd->next++]);
	return &sd->ent;
}

EMU_EXPORT struct dirent64 *readdir64(DIR *d)
{
	struct served_dir *sd = served_of(d);
	if (!sd)
		// cppcheck-suppress CastIntegerToAddressAtReturn
		return EMU_REAL(readdir64)(d);
	if (sd->next >= sd->n)
		return NULL;
	memset(&sd->ent64, 0, sizeof(sd->ent64));
	sd->ent64.d_type = DT_DIR;
	snprintf(sd->ent64.d_name, sizeof(sd->ent64.d_name), "%s", sd->names[sd->next++]);
	return &sd->ent64;
}

EMU_EXPORT int closedir(DIR *d)
{
	pthread_mutex_lock(&dirs_lock);
	for (int i = 0; i < MAX_SERVED_DIRS; i++)
		if (served_dirs[i] && served_dirs[i]->dir == d) {
			free(served_dirs[i]);
			served_dirs[i] = NULL;
		}
	pthread_mutex_unlock(&dirs_lock);
	return EMU_REAL(closedir)(d);
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
