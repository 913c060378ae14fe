/* SPDX-License-Identifier: MIT */
/* Unit tests of rvprof's parts that need no sampling: the symbol resolver (this program's own functions
 * through its mappings, libc's through .dynsym, unknown addresses), the report (histogram order, call
 * stacks, folded output) and the perf.data writer, checked by what Debian's `perf report` and `perf script`
 * read back from it. The records are made here with known PCs and return addresses. */
#include "cunit_run.h"
#include "flamegraph.h"
#include "perfdata.h"
#include "prof_shm.h"
#include "report.h"
#include "rvsample.h"
#include "symbols.h"
#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static struct rvsample_map maps[256];
static size_t nmaps;
static char tmpdir[] = "/tmp/test_prof_units.XXXXXX";

/* The executable mappings of this process, as the sample file records them. */
static int read_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	char line[4352];
	while (nmaps < 256 && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8], path[4096] = "";
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &start, &end, perms, &off, path) < 4)
			continue;
		if (perms[2] != 'x' || path[0] != '/')
			continue;
		struct rvsample_map *m = &maps[nmaps++];
		m->start = start;
		m->end = end;
		m->offset = off;
		snprintf(m->path, sizeof(m->path), "%s", path);
	}
	fclose(f);
	return 0;
}

/* A call chain with known functions: the test records the return addresses a real call leaves. */
static uint64_t ret_in_mid, ret_in_outer;
__attribute__((noinline)) void prof_unit_hot(void)
{
	ret_in_mid = (uint64_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) void prof_unit_warm(void)
{
	__asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) void prof_unit_cold(void)
{
	__asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) void prof_unit_mid(void)
{
	ret_in_outer = (uint64_t)__builtin_return_address(0);
	prof_unit_hot();
	__asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) void prof_unit_outer(void)
{
	prof_unit_mid();
	__asm__ volatile("" ::: "memory");
}

static const char *exe_base(void)
{
	static char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return "?";
	exe[n] = 0;
	return strrchr(exe, '/') + 1;
}

/* Where main returns to: libc's __libc_start_call_main, a local function Debian strips from libc.so.6 and
 * keeps in libc6-dbg's /usr/lib/debug/.build-id/ file. */
static uint64_t ret_in_libc;

/* libc's GNU build ID, from its PT_NOTE segment in memory, as lowercase hex ("" if not found). */
static int libc_build_id_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	if (!strstr(info->dlpi_name, "/libc.so"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof(*nh);
			const unsigned char *desc = (const unsigned char *)name + ((nh->n_namesz + 3) & ~3u);
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && nh->n_descsz <= 64) {
				char *out = arg;
				for (unsigned j = 0; j < nh->n_descsz; j++)
					sprintf(out + 2 * j, "%02x", desc[j]);
				return 1;
			}
			p = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

static void test_symbols(void)
{
	struct prof_symbols *s = prof_symbols_new(maps, nmaps);
	CU_ASSERT_FATAL(s != NULL);
	struct prof_sym sym;
	char label[256];
	CU_ASSERT_EQUAL(prof_symbols_resolve(s, (uint64_t)&prof_unit_hot, &sym), 0);
	CU_ASSERT_STRING_EQUAL(sym.name, "prof_unit_hot");
	CU_ASSERT_STRING_EQUAL(sym.module, exe_base());
	CU_ASSERT_EQUAL(sym.sym_addr, (uint64_t)&prof_unit_hot);
	CU_ASSERT_EQUAL(prof_symbols_resolve(s, (uint64_t)&prof_unit_hot + 2, &sym), 0);
	CU_ASSERT_STRING_EQUAL(sym.name, "prof_unit_hot");
	prof_unit_outer();
	CU_ASSERT_EQUAL(prof_symbols_resolve(s, ret_in_mid - 1, &sym), 0);
	CU_ASSERT_STRING_EQUAL(sym.name, "prof_unit_mid");
	/* libc: Debian strips its .symtab, so this comes from .dynsym */
	CU_ASSERT_EQUAL(prof_symbols_resolve(s, (uint64_t)&getpid, &sym), 0);
	CU_ASSERT_STRING_EQUAL(sym.name, "getpid"); /* not its alias __getpid */
	CU_ASSERT(strncmp(sym.module, "libc", 4) == 0);
	/* libc's local functions come from its separate debug file, found by build ID as perf finds it
	 * (Debian: libc6-dbg, which valgrind depends on); where there is none (the riscv64 libc under
	 * qemu-user) the address stays unnamed or takes a .dynsym name, never a wrong debug file's */
	char id[129] = "", debug[256];
	dl_iterate_phdr(libc_build_id_cb, id);
	snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	int r = prof_symbols_resolve(s, ret_in_libc - 1, &sym);
	if (id[0] && access(debug, R_OK) == 0) {
		CU_ASSERT_EQUAL(r, 0);
		CU_ASSERT_STRING_EQUAL(sym.name ? sym.name : "(none)", "__libc_start_call_main");
	} else {
		fprintf(stderr, "(no debug file %s for libc: its local functions stay unnamed)\n", debug);
		CU_ASSERT(!sym.name || strcmp(sym.name, "__libc_start_call_main") != 0);
	}
	/* no mapping */
	CU_ASSERT_EQUAL(prof_symbols_resolve(s, 0x10, &sym), -1);
	CU_ASSERT_PTR_NULL(sym.name);
	CU_ASSERT_STRING_EQUAL(prof_sym_label(&sym, label, sizeof(label)), "[unknown]");
	prof_symbols_free(s);

	/* a mapping whose file is gone: the module is still named */
	struct rvsample_map gone;
	memset(&gone, 0, sizeof(gone));
	gone.start = 0x10000;
	gone.end = 0x20000;
	snprintf(gone.path, sizeof(gone.path), "/nonexistent/libgone.so");
	s = prof_symbols_new(&gone, 1);
	CU_ASSERT_FATAL(s != NULL);
	CU_ASSERT_EQUAL(prof_symbols_resolve(s, 0x10100, &sym), -1);
	CU_ASSERT_STRING_EQUAL(prof_sym_label(&sym, label, sizeof(label)), "[unknown] (libgone.so)");
	CU_ASSERT_EQUAL(prof_symbols_resolve(s, 0x20000, &sym), -1); /* end is exclusive */
	CU_ASSERT_STRING_EQUAL(prof_sym_label(&sym, label, sizeof(label)), "[unknown]");
	prof_symbols_free(s);
}

/* A function of this program that only its .symtab names: static, so not in .dynsym even with -rdynamic. */
static __attribute__((noinline)) int prof_unit_local(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

/* objcopy with `args` (NULL-terminated), its output to /dev/null: 0 when it exits 0. Tried as $OBJCOPY, then
 * objcopy, and on riscv64 the cross objcopy too: under qemu-user on an x86_64 host the guest's execve runs
 * the host's objcopy, which does not know riscv64 ELF files. */
static int objcopy(const char *const args[])
{
	const char *tools[] = {
		getenv("OBJCOPY"),
		"objcopy",
#if defined(__riscv)
		"riscv64-linux-gnu-objcopy",
#endif
	};
	char *argv[8];
	size_t n = 1;
	for (; args[n - 1] && n < 7; n++)
		argv[n] = (char *)args[n - 1];
	argv[n] = NULL;
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		if (!tools[i] || !*tools[i])
			continue;
		argv[0] = (char *)tools[i];
		posix_spawn_file_actions_t fa;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
		pid_t pid;
		int st = 0, r = posix_spawnp(&pid, tools[i], &fa, NULL, argv, environ);
		posix_spawn_file_actions_destroy(&fa);
		if (r == 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			return 0;
	}
	return -1;
}

/* The name prof_unit_local's address gets in a module at `path` mapped where this program's text is ("" for
 * none): a fresh resolver each time, since a module's symbols are read once. */
static const char *local_name_in(const struct rvsample_map *text, const char *path)
{
	static char name[64];
	struct rvsample_map m = *text;
	snprintf(m.path, sizeof(m.path), "%s", path);
	struct prof_symbols *s = prof_symbols_new(&m, 1);
	struct prof_sym sym;
	name[0] = 0;
	if (s && prof_symbols_resolve(s, (uint64_t)(uintptr_t)&prof_unit_local, &sym) == 0 && sym.name)
		snprintf(name, sizeof(name), "%s", sym.name);
	prof_symbols_free(s);
	return name;
}

static int copy_file(const char *from, const char *to, int extra_byte)
{
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	int ok = in && out;
	char buf[65536];
	size_t n;
	while (ok && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		ok = fwrite(buf, 1, n, out) == n;
	if (ok && extra_byte)
		ok = fputc(0, out) != EOF;
	if (in)
		fclose(in);
	if (out && fclose(out) != 0)
		ok = 0;
	return ok ? 0 : -1;
}

/* A stripped module whose symbols are in a separate debug file named by its .gnu_debuglink (objcopy, as
 * Debian's dh_strip makes them; no /usr/lib/debug/.build-id/ file exists for this program, so the debuglink
 * and its CRC decide): its local functions are named from that file beside it or in its .debug/ folder, as
 * perf and gdb look; never from a file of that name whose contents differ (another build: the CRC). */
static void test_symbols_debuglink(void)
{
	const struct rvsample_map *text = NULL;
	for (size_t i = 0; i < nmaps && !text; i++)
		if (maps[i].start <= (uint64_t)(uintptr_t)&prof_unit_local &&
		    (uint64_t)(uintptr_t)&prof_unit_local < maps[i].end)
			text = &maps[i];
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_STRING_EQUAL(local_name_in(text, text->path), "prof_unit_local"); /* its own .symtab */

	char dir[256], dotdebug[300], stripped[300], debug[300], moved[320], wrong[320];
	snprintf(dir, sizeof(dir), "%s/debuglink", tmpdir);
	snprintf(dotdebug, sizeof(dotdebug), "%s/.debug", dir);
	snprintf(stripped, sizeof(stripped), "%s/prof_units", dir);
	snprintf(debug, sizeof(debug), "%s/prof_units.dbg", dir);
	snprintf(moved, sizeof(moved), "%s/prof_units.dbg", dotdebug);
	snprintf(wrong, sizeof(wrong), "%s/prof_units.dbg.other", dir);
	CU_ASSERT_FATAL(mkdir(dir, 0700) == 0 && mkdir(dotdebug, 0700) == 0);
	char link_arg[400];
	snprintf(link_arg, sizeof(link_arg), "--add-gnu-debuglink=%s", debug);
	const char *keep_debug[] = {"--only-keep-debug", text->path, debug, NULL};
	const char *strip[] = {"--strip-all", link_arg, text->path, stripped, NULL};
	CU_ASSERT_FATAL(objcopy(keep_debug) == 0);
	CU_ASSERT_FATAL(objcopy(strip) == 0);

	/* beside the module */
	CU_ASSERT_STRING_EQUAL(local_name_in(text, stripped), "prof_unit_local");
	/* in its .debug/ folder */
	CU_ASSERT_EQUAL_FATAL(rename(debug, moved), 0);
	CU_ASSERT_STRING_EQUAL(local_name_in(text, stripped), "prof_unit_local");
	/* none: the stripped module names no local function (so the names above came from the debug file) */
	CU_ASSERT_EQUAL_FATAL(rename(moved, wrong), 0);
	CU_ASSERT_STRING_EQUAL(local_name_in(text, stripped), "");
	/* a file of that name whose CRC differs (here one byte more): not used, beside the module or in
	 * .debug/ */
	CU_ASSERT_EQUAL_FATAL(copy_file(wrong, debug, 1), 0);
	CU_ASSERT_STRING_EQUAL(local_name_in(text, stripped), "");
	CU_ASSERT_EQUAL_FATAL(rename(debug, moved), 0);
	CU_ASSERT_STRING_EQUAL(local_name_in(text, stripped), "");
	/* and the same bytes as the debuglink's file again: named */
	CU_ASSERT_EQUAL_FATAL(copy_file(wrong, moved, 0), 0);
	CU_ASSERT_STRING_EQUAL(local_name_in(text, stripped), "prof_unit_local");
	unlink(moved);
	unlink(wrong);
	unlink(stripped);
	rmdir(dotdebug);
	rmdir(dir);
}

/* 70 samples in prof_unit_hot (called from prof_unit_mid from prof_unit_outer), 20 in warm, 10 in cold. */
static size_t make_records(struct rvsample_record *r, int stacks)
{
	prof_unit_outer();
	size_t n = 0;
	for (int i = 0; i < 100; i++, n++) {
		memset(&r[n], 0, sizeof(r[n]));
		r[n].pc = i < 70   ? (uint64_t)&prof_unit_hot + 1
		          : i < 90 ? (uint64_t)&prof_unit_warm
		                   : (uint64_t)&prof_unit_cold;
		r[n].time_ns = 1000 + (uint64_t)i;
		r[n].pid = (uint32_t)getpid();
		r[n].tid = (uint32_t)getpid() + (i % 2); /* two threads */
		r[n].flags = RVSAMPLE_F_EXACT;
		r[n].period = 100000;
		if (stacks) {
			r[n].frames[0] = r[n].pc;
			r[n].frames[1] = i < 70 ? ret_in_mid : ret_in_outer;
			r[n].frames[2] =
			    ret_in_outer; /* hot: mid's caller; others: pretend outer called them twice */
			r[n].nframes = i < 70 ? 3 : 2;
		}
	}
	return n;
}

static struct rvsample_record recs[100];

static void test_report(void)
{
	size_t n = make_records(recs, 1);
	struct prof_symbols *s = prof_symbols_new(maps, nmaps);
	struct prof_report *r = prof_report_new(s, 1);
	CU_ASSERT_FATAL(r != NULL);
	for (size_t i = 0; i < n; i++)
		CU_ASSERT_EQUAL(prof_report_add(r, &recs[i]), 0);
	CU_ASSERT_EQUAL(prof_report_samples(r), 100);
	size_t nf;
	const struct prof_entry *e = prof_report_functions(r, &nf);
	CU_ASSERT_FATAL(e != NULL && nf == 3);
	CU_ASSERT_STRING_EQUAL(e[0].name, "prof_unit_hot");
	CU_ASSERT_EQUAL(e[0].samples, 70);
	CU_ASSERT_STRING_EQUAL(e[1].name, "prof_unit_warm");
	CU_ASSERT_EQUAL(e[1].samples, 20);
	CU_ASSERT_STRING_EQUAL(e[2].name, "prof_unit_cold");
	CU_ASSERT_EQUAL(e[2].samples, 10);
	CU_ASSERT_STRING_EQUAL(e[0].module, exe_base());
	e = prof_report_stacks(r, &nf);
	CU_ASSERT_FATAL(e != NULL && nf == 3);
	CU_ASSERT_STRING_EQUAL(e[0].name, "prof_unit_outer;prof_unit_mid;prof_unit_hot");
	CU_ASSERT_EQUAL(e[0].samples, 70);
	CU_ASSERT_STRING_EQUAL(e[1].name, "prof_unit_outer;prof_unit_warm");

	/* folded: "frame;frame;frame COUNT", root first, counts summing to the samples */
	char path[256];
	snprintf(path, sizeof(path), "%s/out.folded", tmpdir);
	CU_ASSERT_EQUAL(prof_report_write_folded(r, path), 0);
	FILE *f = fopen(path, "r");
	CU_ASSERT_FATAL(f != NULL);
	char line[1024];
	unsigned long long sum = 0;
	int lines = 0;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strrchr(line, ' ');
		CU_ASSERT_FATAL(sp != NULL);
		char *end;
		unsigned long long c = strtoull(sp + 1, &end, 10);
		CU_ASSERT(*end == '\n' && c > 0);
		sum += c;
		lines++;
		*sp = 0;
		CU_ASSERT(strstr(line, ";;") == NULL && line[0] != ';');
		if (lines == 1)
			CU_ASSERT_STRING_EQUAL(line, "prof_unit_outer;prof_unit_mid;prof_unit_hot");
	}
	fclose(f);
	CU_ASSERT_EQUAL(lines, 3);
	CU_ASSERT_EQUAL(sum, 100);
	prof_report_free(r);

	/* without stacks: the folded lines are the sampled functions alone */
	make_records(recs, 0);
	r = prof_report_new(s, 0);
	for (size_t i = 0; i < n; i++)
		prof_report_add(r, &recs[i]);
	e = prof_report_stacks(r, &nf);
	CU_ASSERT_FATAL(e != NULL && nf == 3);
	CU_ASSERT_STRING_EQUAL(e[0].name, "prof_unit_hot");
	CU_ASSERT_EQUAL(e[0].samples, 70);
	prof_report_free(r);
	prof_symbols_free(s);
}

/* Samples of two commands (a program and what its child exec'd): functions and folded stacks are kept per
 * command and name it; the same function in two commands stays two entries. One command: no names. */
static void test_report_commands(void)
{
	size_t n = make_records(recs, 1);
	struct prof_symbols *s = prof_symbols_new(maps, nmaps);
	struct prof_report *r = prof_report_new(NULL, 1);
	CU_ASSERT_FATAL(s != NULL && r != NULL);
	prof_report_set_process(r, s, "parent");
	for (size_t i = 0; i < 70; i++) /* the hot samples */
		CU_ASSERT_EQUAL(prof_report_add(r, &recs[i]), 0);
	CU_ASSERT_EQUAL(prof_report_commands(r), 1);
	size_t nf;
	const struct prof_entry *e = prof_report_stacks(r, &nf);
	CU_ASSERT_FATAL(e != NULL && nf == 1);
	CU_ASSERT_STRING_EQUAL(e[0].name, "prof_unit_outer;prof_unit_mid;prof_unit_hot");
	e = prof_report_functions(r, &nf);
	CU_ASSERT_FATAL(e != NULL && nf == 1);
	CU_ASSERT_STRING_EQUAL(e[0].comm, "");
	prof_report_set_process(r, s, "child;x"); /* ';' would split the folded frame: replaced */
	for (size_t i = 60; i < n; i++)           /* 10 hot, 20 warm, 10 cold */
		CU_ASSERT_EQUAL(prof_report_add(r, &recs[i]), 0);
	CU_ASSERT_EQUAL(prof_report_commands(r), 2);
	CU_ASSERT_EQUAL(prof_report_samples(r), 110);
	e = prof_report_functions(r, &nf);
	CU_ASSERT_FATAL(e != NULL && nf == 4);
	CU_ASSERT_STRING_EQUAL(e[0].comm, "parent");
	CU_ASSERT_STRING_EQUAL(e[0].name, "prof_unit_hot");
	CU_ASSERT_EQUAL(e[0].samples, 70);
	CU_ASSERT_STRING_EQUAL(e[1].comm, "child_x");
	CU_ASSERT_STRING_EQUAL(e[1].name, "prof_unit_warm");
	CU_ASSERT_EQUAL(e[1].samples, 20);
	CU_ASSERT_STRING_EQUAL(e[2].comm, "child_x"); /* 10 each: by name */
	CU_ASSERT_STRING_EQUAL(e[2].name, "prof_unit_cold");
	CU_ASSERT_STRING_EQUAL(e[3].comm, "child_x");
	CU_ASSERT_STRING_EQUAL(e[3].name, "prof_unit_hot");
	CU_ASSERT_EQUAL(e[3].samples, 10);
	CU_ASSERT_STRING_EQUAL(e[0].module, exe_base());
	e = prof_report_stacks(r, &nf);
	CU_ASSERT_FATAL(e != NULL && nf == 4);
	CU_ASSERT_STRING_EQUAL(e[0].name, "parent;prof_unit_outer;prof_unit_mid;prof_unit_hot");
	CU_ASSERT_STRING_EQUAL(e[1].name, "child_x;prof_unit_outer;prof_unit_warm");
	/* the printed histogram has the command column */
	char path[256];
	snprintf(path, sizeof(path), "%s/report.txt", tmpdir);
	FILE *f = fopen(path, "w+");
	CU_ASSERT_FATAL(f != NULL);
	prof_report_print(r, f, 0, 10);
	rewind(f);
	char text[4096];
	size_t len = fread(text, 1, sizeof(text) - 1, f);
	text[len] = 0;
	fclose(f);
	unlink(path);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "command: function (module)"));
	char want[256];
	snprintf(want, sizeof(want), "  child_x: prof_unit_hot (%s)\n", exe_base());
	CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
	prof_report_free(r);
	prof_symbols_free(s);
}

/* Runs a command, returns its whole stdout (malloc'd) or NULL. */
static char *run(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	if (!p)
		return NULL;
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + len, 1, cap - len - 1, p)) > 0) {
		len += got;
		if (len + 1 == cap) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
			}
			buf = nb;
		}
	}
	int st = pclose(p);
	if (buf)
		buf[len] = 0;
	if (st != 0) {
		fprintf(stderr, "%s: exit status %d\n%s\n", cmd, st, buf ? buf : "");
		free(buf);
		return NULL;
	}
	return buf;
}

/* The first data line of `perf report --stdio` (the hottest entry). */
static const char *first_entry(char *out)
{
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n"))
		if (l[0] != '#' && strchr(l, '%'))
			return l;
	return "";
}

static void write_perfdata(const char *path, int stacks)
{
	char *argv[] = {"test_prof_units", "--unit"};
	struct perfdata_config cfg = {"PAPI_TOT_CYC", 100000, 2, stacks, "test_prof_units", 2, argv};
	struct perfdata *pd;
	CU_ASSERT_FATAL(perfdata_open(&pd, path, &cfg) == 0);
	CU_ASSERT_EQUAL(perfdata_add_maps(pd, (uint32_t)getpid(), maps, nmaps), 0);
	size_t n = make_records(recs, stacks);
	for (size_t i = 0; i < n; i++)
		CU_ASSERT_EQUAL(perfdata_add_sample(pd, &recs[i]), 0);
	CU_ASSERT_EQUAL(perfdata_add_lost(pd, (uint32_t)getpid(), 3), 0);
	/* two throttled intervals of the first sample's thread, after the samples in time */
	struct rvsample_record mark = recs[n - 1];
	for (int k = 0; k < 4; k++) {
		mark.time_ns += 1000;
		CU_ASSERT_EQUAL(perfdata_add_throttle(pd, &mark, k % 2 == 0), 0);
	}
	CU_ASSERT_EQUAL(perfdata_close(pd), 0);
}

static void test_perfdata(void)
{
	char path[256], cmd[512];
	snprintf(path, sizeof(path), "%s/perf.data", tmpdir);
	write_perfdata(path, 0);
	snprintf(cmd, sizeof(cmd), "perf report --stdio -i %s --sort sym 2>&1", path);
	char *out = run(cmd);
	CU_ASSERT_FATAL(out != NULL);
	CU_ASSERT(strstr(out, "of event 'PAPI_TOT_CYC'") != NULL);
	CU_ASSERT(strstr(out, "# Samples: 100 ") != NULL);
	CU_ASSERT(strstr(out, "# Event count (approx.): 10000000") != NULL);
	const char *top = first_entry(out);
	printf("\n  perf report: %s\n", top);
	CU_ASSERT(strstr(top, "70.00%") != NULL && strstr(top, "prof_unit_hot") != NULL);
	free(out);

	/* perf script sees every sample; --stats counts the records of each type */
	snprintf(cmd, sizeof(cmd), "perf script -i %s -F tid,ip,sym 2>&1", path);
	out = run(cmd);
	CU_ASSERT_FATAL(out != NULL);
	int hot = 0, lines = 0;
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) { /* perf's warnings aside */
		lines += strstr(l, " prof_unit_") != NULL;
		hot += strstr(l, " prof_unit_hot") != NULL;
	}
	CU_ASSERT_EQUAL(lines, 100);
	CU_ASSERT_EQUAL(hot, 70);
	free(out);
	snprintf(cmd, sizeof(cmd), "perf report --stdio -i %s --stats 2>&1", path);
	out = run(cmd);
	CU_ASSERT_FATAL(out != NULL);
	CU_ASSERT(strstr(out, "LOST events") != NULL);
	CU_ASSERT(strstr(out, "COMM events") != NULL);
	CU_ASSERT(strstr(out, "MMAP2 events") != NULL);
	CU_ASSERT(strstr(out, "THROTTLE events:          2") != NULL);
	CU_ASSERT(strstr(out, "UNTHROTTLE events:          2") != NULL);
	free(out);
	snprintf(cmd, sizeof(cmd), "perf report -D -i %s 2>/dev/null | grep -c 'PERF_RECORD_.*THROTTLE'",
	         path);
	out = run(cmd);
	CU_ASSERT(out && atoi(out) == 4);
	free(out);
	/* the raw dump shows each sample's misc: 0x4002 = PERF_RECORD_MISC_EXACT_IP | PERF_RECORD_MISC_USER
	 */
	snprintf(cmd, sizeof(cmd),
	         "perf report -D -i %s 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE(IP, 0x4002)'", path);
	out = run(cmd);
	CU_ASSERT(out && atoi(out) == 100);
	free(out);

	/* call chains: perf report's caller view names outer > mid > hot */
	write_perfdata(path, 1);
	snprintf(cmd, sizeof(cmd), "perf script -i %s -F ip,sym 2>&1", path);
	out = run(cmd);
	CU_ASSERT_FATAL(out != NULL);
	const char *a = strstr(out, "prof_unit_hot"), *b = a ? strstr(a, "prof_unit_mid") : NULL,
	           *c = b ? strstr(b, "prof_unit_outer") : NULL;
	CU_ASSERT(a && b && c); /* innermost first, as perf script prints a chain */
	free(out);
	unlink(path);
}

/* Three process images, as rvprof writes them: the program (pid P), a child it forked (P+1, 10 samples)
 * that then exec'd "other" (20 samples). perf report must name each sample's command and pid, and see
 * FORK, COMM (exec), MMAP2 and EXIT records. The child's pid is made up: perf does not check it. */
static void test_perfdata_processes(void)
{
	char path[256], cmd[512];
	snprintf(path, sizeof(path), "%s/perf-proc.data", tmpdir);
	char *argv[] = {"test_prof_units"};
	struct perfdata_config cfg = {"PAPI_TOT_CYC", 100000, 0, 0, "parentcmd", 1, argv};
	struct perfdata *pd;
	CU_ASSERT_FATAL(perfdata_open(&pd, path, &cfg) == 0);
	uint32_t parent = (uint32_t)getpid(), child = parent + 1;
	make_records(recs, 0);
	struct perfdata_process p = {parent, 1, 0, "parentcmd", 0, 0, 0};
	CU_ASSERT_EQUAL(perfdata_add_process(pd, &p, maps, nmaps), 0);
	for (int i = 0; i < 30; i++) { /* 30 samples of the parent: warm */
		struct rvsample_record r = recs[75];
		r.time_ns = 100 + (uint64_t)i;
		r.tid = parent;
		CU_ASSERT_EQUAL(perfdata_add_sample(pd, &r), 0);
	}
	struct perfdata_process c = {child, parent, parent, "parentcmd", 1, 0, 1000};
	CU_ASSERT_EQUAL(perfdata_add_process(pd, &c, maps, nmaps), 0);
	for (int i = 0; i < 10; i++) { /* the child before exec: cold */
		struct rvsample_record r = recs[95];
		r.pid = r.tid = child;
		r.time_ns = 1001 + (uint64_t)i;
		CU_ASSERT_EQUAL(perfdata_add_sample(pd, &r), 0);
	}
	struct perfdata_process x = {child, parent, 0, "other", 0, 1, 2000};
	CU_ASSERT_EQUAL(perfdata_add_process(pd, &x, maps, nmaps), 0);
	for (int i = 0; i < 20; i++) { /* what it exec'd: hot */
		struct rvsample_record r = recs[0];
		r.pid = r.tid = child;
		r.time_ns = 2001 + (uint64_t)i;
		CU_ASSERT_EQUAL(perfdata_add_sample(pd, &r), 0);
	}
	CU_ASSERT_EQUAL(perfdata_add_exit(pd, child, parent, 3000), 0);
	CU_ASSERT_EQUAL(perfdata_add_exit(pd, parent, 1, 3001), 0);
	CU_ASSERT_EQUAL(perfdata_close(pd), 0);

	snprintf(cmd, sizeof(cmd),
	         "perf report --stdio -i %s --sort comm,pid,sym 2>/dev/null | grep %% | sed -E 's/ +/ /g'",
	         path);
	char *out = run(cmd);
	CU_ASSERT_FATAL(out != NULL);
	printf("\n%s", out);
	char want[3][128];
	/* the command column is the sample's command at its time; pid:command names the thread's last */
	snprintf(want[0], sizeof(want[0]), " 50.00%% parentcmd %u:parentcmd [.] prof_unit_warm\n", parent);
	snprintf(want[1], sizeof(want[1]), " 33.33%% other %u:other [.] prof_unit_hot\n", child);
	snprintf(want[2], sizeof(want[2]), " 16.67%% parentcmd %u:other [.] prof_unit_cold\n", child);
	for (int k = 0; k < 3; k++)
		if (!strstr(out, want[k])) {
			printf("  missing: '%s'\n", want[k]);
			CU_FAIL("perf report does not name a command's samples");
		}
	free(out);
	snprintf(cmd, sizeof(cmd),
	         "perf report -D -i %s 2>/dev/null | grep -E 'PERF_RECORD_(FORK|EXIT|COMM)' | "
	         "sed -E 's/^[0-9]+ 0x[0-9a-f]+ \\[0x[0-9a-f]+\\]: //'",
	         path);
	out = run(cmd);
	CU_ASSERT_FATAL(out != NULL);
	char expect[512];
	snprintf(expect, sizeof(expect),
	         "PERF_RECORD_COMM: parentcmd:%u/%u\nPERF_RECORD_FORK(%u:%u):(%u:%u)\n"
	         "PERF_RECORD_COMM: parentcmd:%u/%u\nPERF_RECORD_COMM exec: other:%u/%u\n"
	         "PERF_RECORD_EXIT(%u:%u):(%u:%u)\nPERF_RECORD_EXIT(%u:%u):(1:1)\n",
	         parent, parent, child, child, parent, parent, child, child, child, child, child, child,
	         parent, parent, parent, parent);
	CU_ASSERT_STRING_EQUAL(out, expect);
	free(out);
	unlink(path);
}

/* The front end's check of the agent's page (prof_shm_check): a program may write anything over it. */
static void test_shm_check(void)
{
	struct rvprof_shm s;
	char why[128];
	memset(&s, 0, sizeof(s));
	s.magic = RVPROF_SHM_MAGIC;
	s.version = RVPROF_SHM_VERSION;
	s.state = RVPROF_DONE;
	s.precise = 2;
	s.threads = 1;
	s.samples = s.exact = 100;
	s.at_stop = 36;
	s.pid = 1234;
	s.ppid = 1;
	s.how = RVPROF_HOW_FORKED;
	snprintf(s.comm, sizeof(s.comm), "prog");
	CU_ASSERT_EQUAL(prof_shm_check(&s, why, sizeof(why)), 0);
	struct rvprof_shm bad = s;
	bad.precise = 0x41414141;
	CU_ASSERT_EQUAL(prof_shm_check(&bad, why, sizeof(why)), -1);
	CU_ASSERT_STRING_EQUAL(why, "precise_ip 1094795585");
	bad = s;
	bad.state = 7;
	CU_ASSERT_EQUAL(prof_shm_check(&bad, why, sizeof(why)), -1);
	bad = s;
	bad.exact = 101;
	CU_ASSERT_EQUAL(prof_shm_check(&bad, why, sizeof(why)), -1);
	bad = s;
	bad.threads_failed = -1;
	CU_ASSERT_EQUAL(prof_shm_check(&bad, why, sizeof(why)), -1);
	bad = s;
	memset(bad.message, 'x', sizeof(bad.message));
	CU_ASSERT_EQUAL(prof_shm_check(&bad, why, sizeof(why)), -1);
	CU_ASSERT_STRING_EQUAL(why, "its message is not a string");
	/* who the image is: a pid, a known way it came, a command name that is a string */
	bad = s;
	bad.pid = 0;
	CU_ASSERT_EQUAL(prof_shm_check(&bad, why, sizeof(why)), -1);
	CU_ASSERT_STRING_EQUAL(why, "pid 0");
	bad = s;
	bad.how = 9;
	CU_ASSERT_EQUAL(prof_shm_check(&bad, why, sizeof(why)), -1);
	CU_ASSERT_STRING_EQUAL(why, "how 9");
	bad = s;
	bad.exec_end = 2;
	CU_ASSERT_EQUAL(prof_shm_check(&bad, why, sizeof(why)), -1);
	bad = s;
	memset(bad.comm, 'c', sizeof(bad.comm));
	CU_ASSERT_EQUAL(prof_shm_check(&bad, why, sizeof(why)), -1);
	CU_ASSERT_STRING_EQUAL(why, "its comm is not a string");
	memset(&bad, 'A', sizeof(bad)); /* what a program that scribbles over it leaves */
	CU_ASSERT_EQUAL(prof_shm_check(&bad, why, sizeof(why)), -1);
	CU_ASSERT_STRING_EQUAL(why, "magic 0x41414141, not 0x72767066");
}

static size_t occurrences(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The flame graph merges frames by their callers whatever order the stacks come in (prof_report_stacks
 * gives them by samples, so "a;x" and "a;z" are apart here), and escapes names for XML. */
static void test_flamegraph(void)
{
	const struct prof_entry stacks[] = {
	    {"a;x", NULL, 5, ""}, {"b;y", NULL, 3, ""},     {"a;z", NULL, 2, ""},
	    {"a", NULL, 1, ""},   {"a;x;<&>", NULL, 1, ""},
	};
	char path[256];
	snprintf(path, sizeof(path), "%s/flame.svg", tmpdir);
	CU_ASSERT_EQUAL_FATAL(prof_flamegraph_write(stacks, 5, "t \"1\"", path), 0);
	FILE *f = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	static char svg[1 << 16];
	size_t len = fread(svg, 1, sizeof(svg) - 1, f);
	svg[len] = 0;
	fclose(f);
	CU_ASSERT_EQUAL(occurrences(svg, "<title>a ("), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>a (9 samples, 75.00%)</title>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>x (6 samples, 50.00%)</title>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>b (3 samples, 25.00%)</title>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<title>&lt;&amp;&gt; (1 samples, 8.33%)</title>"));
	CU_ASSERT_PTR_NULL(strstr(svg, "<&>"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "t &quot;1&quot;"));
	CU_ASSERT_EQUAL(occurrences(svg, "<rect x="), 7); /* a, x, <&>, z, b, y and the background */
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "</svg>\n"));
	unlink(path);
	const struct prof_entry none[] = {{"a", NULL, 0, ""}};
	CU_ASSERT_EQUAL(prof_flamegraph_write(none, 1, "t", path), -EINVAL);
	CU_ASSERT_EQUAL(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/no/such/dir/flame.svg", tmpdir);
	CU_ASSERT_EQUAL(prof_flamegraph_write(stacks, 5, "t", path), -ENOENT);
}

int main(void)
{
	ret_in_libc = (uint64_t)__builtin_return_address(0);
	if (!mkdtemp(tmpdir) || read_maps() != 0 || CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("profiler", NULL, NULL);
	CU_add_test(s, "symbols: own functions, libc's .dynsym, unknown addresses", test_symbols);
	CU_add_test(s, "symbols: a stripped module's .gnu_debuglink file, its CRC checked",
	            test_symbols_debuglink);
	CU_add_test(s, "report: histogram, stacks, folded output", test_report);
	CU_add_test(s, "flame graph: frames merged by their callers, names escaped", test_flamegraph);
	CU_add_test(s, "perf.data: perf report and perf script read it back", test_perfdata);
	CU_add_test(s, "the agent's page: what a program wrote over it is refused", test_shm_check);
	CU_add_test(s, "report: samples of several commands named by command", test_report_commands);
	CU_add_test(s, "perf.data: FORK, COMM exec, EXIT: perf report names each process",
	            test_perfdata_processes);
	int rc = cunit_run_all();
	char path[256];
	snprintf(path, sizeof(path), "%s/out.folded", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	return rc;
}
