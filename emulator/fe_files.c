// SPDX-License-Identifier: MIT
/* The files through which Linux describes the machine: /proc/cpuinfo in the RISC-V kernel's format
 * (arch/riscv/kernel/cpu.c), the perf sysctls, the SBI PMU's sysfs entries (drivers/perf/riscv_pmu_sbi.c),
 * and the /sys/devices/system/{cpu,node} entries PAPI and libpfm4 read, caches included
 * (drivers/base/cacheinfo.c; the leaves in arch/riscv/kernel/cacheinfo.c's order). fe_vfs.c serves them
 * through the interposed open/fopen/access family; this file only says what they contain. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fe.h"
#include "mach.h"

/* The answers are built by appending strings and decimal or hex numbers: what vsnprintf would print, at a
 * fraction of its cost (a format walk per call; the first init of PAPI builds some twenty answers). The text
 * stops one byte short of the buffer's end, as vsnprintf's would. */
static void put(struct fe_text *b, const char *s)
{
	size_t room = sizeof(b->text) - 1 - b->len, n = strlen(s);
	if (n > room)
		n = room;
	memcpy(b->text + b->len, s, n);
	b->len += n;
	b->text[b->len] = 0;
}

static void put_u(struct fe_text *b, unsigned long long v)
{
	char d[24];
	size_t i = sizeof(d);
	d[--i] = 0;
	do
		d[--i] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	put(b, d + i);
}

/* a signed decimal then a newline (the sysctls: perf_event_paranoid can be -1) */
static void put_line_i(struct fe_text *b, long long v)
{
	if (v < 0) {
		put(b, "-");
		put_u(b, 0ull - (unsigned long long)v);
	} else {
		put_u(b, (unsigned long long)v);
	}
	put(b, "\n");
}

static void put_line_u(struct fe_text *b, unsigned long long v)
{
	put_u(b, v);
	put(b, "\n");
}

/* hex, zero-padded to width digits (at most 8) */
static void put_hex(struct fe_text *b, uint32_t v, unsigned width)
{
	static const char digits[] = "0123456789abcdef";
	char d[9];
	unsigned n = 0;
	do
		d[8 - ++n] = digits[v & 0xf];
	while ((v >>= 4) != 0 && n < 8);
	while (n < width && n < 8)
		d[8 - ++n] = '0';
	d[8] = 0;
	put(b, d + 8 - n);
}

/* The isa string: the model's (an Andes core's names xandespmu; a core that always has Sscofpmf names it),
 * plus _sscofpmf when the option is on and the model's does not already name it. */
static void isa_string(char *out, size_t cap)
{
	const char *isa = emu_model()->isa;
	int add = emu_cfg()->isa_sscofpmf && strstr(isa, "_sscofpmf") == NULL;
	snprintf(out, cap, "%s%s", isa, add ? "_sscofpmf" : "");
}

static void gen_cpuinfo(struct fe_text *b)
{
	const struct rvemu_model *m = emu_model();
	char isa[256];
	isa_string(isa, sizeof(isa));
	for (unsigned cpu = 0; cpu < emu_nharts(); cpu++) {
		put(b, "processor\t: ");
		put_u(b, cpu);
		put(b, "\nhart\t\t: ");
		put_u(b, emu_cpu_hart_id(cpu));
		put(b, "\nisa\t\t: ");
		put(b, isa);
		put(b, "\nmmu\t\t: ");
		put(b, m->mmu);
		put(b, "\nuarch\t\t: ");
		put(b, m->uarch);
		put(b, "\nmvendorid\t: ");
		put(b, m->mvendorid);
		put(b, "\nmarchid\t\t: ");
		put(b, m->marchid);
		put(b, "\nmimpid\t\t: ");
		put(b, m->mimpid);
		put(b, "\nhart isa\t: ");
		put(b, isa);
		put(b, "\n\n");
	}
}

/* cpumask as the kernel prints it (%*pb): hex, 32-bit groups separated by commas. */
static void print_mask(struct fe_text *b, unsigned first, unsigned count)
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
		put_hex(b, word, width);
		put(b, g ? "," : "\n");
	}
}

static void print_list(struct fe_text *b, unsigned first, unsigned count)
{
	put_u(b, first);
	if (count != 1) {
		put(b, "-");
		put_u(b, first + count - 1);
	}
	put(b, "\n");
}

/* One cache leaf of the model (events/models.csv caches: "level:type:size_kib:ways:line[:shared]"). */
struct cache_leaf {
	unsigned level, size_kib, ways, line;
	char type[16];
	int shared;
};

static int cache_leaf(unsigned index, struct cache_leaf *out)
{
	const char *p = emu_model()->caches;
	for (unsigned i = 0; p && *p; i++) {
		char shared[8] = "";
		memset(out, 0, sizeof(*out));
		int n = sscanf(p, "%u:%15[A-Za-z]:%u:%u:%u:%7[a-z]", &out->level, out->type, &out->size_kib,
		               &out->ways, &out->line, shared);
		if (n < 5)
			return 0;
		out->shared = strcmp(shared, "shared") == 0;
		if (i == index)
			return 1;
		p = strchr(p, ';');
		p = p ? p + 1 : NULL;
	}
	return 0;
}

/* cpuN/cache/indexK/...: 1 served, 0 not ours, -ENOENT for a leaf this machine does not have. */
static int gen_cache(unsigned cpu, const char *f, struct fe_text *b, int *is_dir)
{
	char *end;
	if (!*f) {
		*is_dir = 1;
		return emu_model()->caches[0] ? 1 : -ENOENT;
	}
	if (strncmp(f, "index", 5))
		return -ENOENT; /* the host's other entries (e.g. uevent) */
	unsigned long index = strtoul(f + 5, &end, 10);
	struct cache_leaf c;
	if (end == f + 5 || (*end && *end != '/') || !cache_leaf((unsigned)index, &c))
		return -ENOENT;
	const char *attr = *end ? end + 1 : "";
	unsigned sets = c.size_kib * 1024u / (c.ways * c.line);
	if (!*attr)
		*is_dir = 1;
	else if (!strcmp(attr, "level"))
		put_line_u(b, c.level);
	else if (!strcmp(attr, "type")) {
		put(b, c.type);
		put(b, "\n");
	} else if (!strcmp(attr, "size")) {
		put_u(b, c.size_kib);
		put(b, "K\n");
	} else if (!strcmp(attr, "ways_of_associativity"))
		put_line_u(b, c.ways);
	else if (!strcmp(attr, "coherency_line_size"))
		put_line_u(b, c.line);
	else if (!strcmp(attr, "number_of_sets"))
		put_line_u(b, sets);
	else if (!strcmp(attr, "physical_line_partition"))
		put(b, "1\n");
	else if (!strcmp(attr, "shared_cpu_map"))
		print_mask(b, c.shared ? 0 : cpu, c.shared ? emu_nharts() : 1);
	else if (!strcmp(attr, "shared_cpu_list"))
		print_list(b, c.shared ? 0 : cpu, c.shared ? emu_nharts() : 1);
	else if (!strcmp(attr, "id"))
		put_line_u(b, c.shared ? 0 : cpu);
	else
		return -ENOENT;
	return 1;
}

#define SYS_CPU  "/sys/devices/system/cpu/"
#define SYS_NODE "/sys/devices/system/node/"

/* Per-CPU files: 1 served, 0 not ours (forward), -ENOENT for a CPU or entry this machine does not have. */
static int gen_sys_cpu(const char *rest, struct fe_text *b, int *is_dir)
{
	char *end;
	unsigned long cpu = strtoul(rest, &end, 10);
	if (end == rest || (*end && *end != '/'))
		return 0;
	if (cpu >= emu_nharts())
		return -ENOENT;
	const char *f = *end ? end + 1 : "";
	unsigned khz = emu_model()->freq_mhz * 1000u;
	if (!strncmp(f, "cache", 5) && (f[5] == 0 || f[5] == '/'))
		return gen_cache((unsigned)cpu, f[5] ? f + 6 : "", b, is_dir);
	if (!*f || !strcmp(f, "topology") || !strcmp(f, "cpufreq"))
		*is_dir = 1;
	else if (!strcmp(f, "topology/thread_siblings"))
		print_mask(b, (unsigned)cpu, 1);
	else if (!strcmp(f, "topology/core_siblings") || !strcmp(f, "topology/package_cpus"))
		print_mask(b, 0, emu_nharts());
	else if (!strcmp(f, "topology/thread_siblings_list"))
		put_line_u(b, cpu);
	else if (!strcmp(f, "topology/core_id"))
		put_line_u(b, cpu);
	else if (!strcmp(f, "topology/physical_package_id"))
		put(b, "0\n");
	else if (!strcmp(f, "online"))
		put(b, "1\n");
	else if (!strcmp(f, "cpufreq/cpuinfo_max_freq") || !strcmp(f, "cpufreq/cpuinfo_min_freq") ||
	         !strcmp(f, "cpufreq/scaling_cur_freq"))
		put_line_u(b, khz);
	else
		return 0;
	return 1;
}

static int gen_sys_node(const char *rest, struct fe_text *b, int *is_dir)
{
	if (!strcmp(rest, "online") || !strcmp(rest, "possible")) {
		put(b, "0\n");
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
		print_list(b, 0, emu_nharts());
	else
		return 0;
	return 1;
}

/* The SBI PMU registers as "cpu" with type PERF_TYPE_RAW and two format attributes; it has no events/
 * directory (perf's JSON tables name the events). The host's own PMU behind the same paths is hidden.
 * A core with Precise Event Sampling says so as x86 does, in caps/max_precise (the highest precise_ip it
 * honours); the RISC-V driver has no caps/ directory, so a core without PES has none either. */
static int gen_pmu(const char *rest, struct fe_text *b, int *is_dir)
{
	int pes = emu_cfg()->pes;
	if (!*rest || !strcmp(rest, "format") || (pes && !strcmp(rest, "caps")))
		*is_dir = 1;
	else if (pes && !strcmp(rest, "caps/max_precise"))
		put(b, "3\n");
	else if (!strcmp(rest, "type"))
		put_line_i(b, PERF_TYPE_RAW);
	else if (!strcmp(rest, "format/event"))
		put(b, "config:0-47\n");
	else if (!strcmp(rest, "format/firmware"))
		put(b, "config:63\n");
	else if (!strcmp(rest, "perf_event_mux_interval_ms"))
		put_line_u(b, emu_cycles_to_ns(emu_cfg()->mux_cycles) / 1000000u);
	else
		return -ENOENT; /* events/, caps/, the host's other attributes */
	return 1;
}

int fe_file_content(const char *path, struct fe_text *b, int *is_dir)
{
	const struct emu_config *c = emu_cfg();
	*is_dir = 0;
	b->len = 0;
	b->text[0] = 0;
	if (!path)
		return 0;
	/* told apart by their directory first: PAPI's first init asks for some twenty of these paths */
	if (!strncmp(path, "/proc/", 6)) {
		const char *p = path + 6;
		if (!strcmp(p, "cpuinfo")) {
			gen_cpuinfo(b);
			return 1;
		}
		if (strncmp(p, "sys/kernel/", 11))
			return 0;
		const char *k = p + 11;
		if (!strcmp(k, "perf_event_paranoid"))
			put_line_i(b, c->paranoid);
		else if (!strcmp(k, "perf_user_access"))
			put_line_i(b, c->perf_user_access);
		else if (!strcmp(k, "nmi_watchdog"))
			put(b, "0\n");
		else if (!strcmp(k, "perf_event_max_sample_rate"))
			put_line_u(b, c->max_sample_rate);
		else if (!strcmp(k, "perf_event_mux_interval_ms"))
			put_line_u(b, emu_cycles_to_ns(c->mux_cycles) / 1000000u);
		else
			return 0;
	} else if (strncmp(path, "/sys/", 5)) {
		return 0;
	} else if (!strncmp(path, SYS_CPU, sizeof(SYS_CPU) - 1)) {
		const char *f = path + sizeof(SYS_CPU) - 1;
		if (!strncmp(f, "cpu", 3))
			return gen_sys_cpu(f + 3, b, is_dir);
		if (!strcmp(f, "online") || !strcmp(f, "possible") || !strcmp(f, "present"))
			print_list(b, 0, emu_nharts());
		else if (!strcmp(f, "offline"))
			put(b, "\n");
		else
			return 0;
	} else if (!strncmp(path, SYS_NODE, sizeof(SYS_NODE) - 1)) {
		return gen_sys_node(path + sizeof(SYS_NODE) - 1, b, is_dir);
	} else if (!strncmp(path, "/sys/bus/event_source/devices/cpu", 33) &&
	           (path[33] == 0 || path[33] == '/')) {
		return gen_pmu(path[33] ? path + 34 : "", b, is_dir);
	} else if (!strncmp(path, "/sys/devices/cpu", 16) && (path[16] == 0 || path[16] == '/')) {
		return gen_pmu(path[16] ? path + 17 : "", b, is_dir);
	} else {
		return 0;
	}
	return 1;
}

int fe_dir_listing(const char *path, char names[][FE_NAME_MAX], int max)
{
	/* /sys/devices/system/cpu/cpuN/cache: the model's leaves, not the host's (PAPI's
	 * generic_get_memory_info reads whatever index* readdir returns) */
	char *end;
	if (!path || strncmp(path, SYS_CPU "cpu", sizeof(SYS_CPU "cpu") - 1))
		return 0;
	const char *n = path + sizeof(SYS_CPU "cpu") - 1;
	unsigned long cpu = strtoul(n, &end, 10);
	if (end == n || strcmp(end, "/cache") != 0)
		return 0;
	if (cpu >= emu_nharts() || !emu_model()->caches[0])
		return -ENOENT;
	struct cache_leaf c;
	int count = 0;
	for (int i = 0; i < max && cache_leaf((unsigned)i, &c); i++)
		snprintf(names[count++], FE_NAME_MAX, "index%d", i);
	return count;
}

/* ------------------------------------------------------------------------------ answers built once */
/* Every answer above is fixed for the life of the process (the machine and the sysctls are set at load, and
 * writes are refused), yet PAPI and libpfm4 open the same files again and again (cpuinfo three times per
 * PAPI_library_init, the cache leaves, the sysctls per event). So each path's answer is built at its first
 * open and kept: an open-addressing table of immutable entries, each published by one compare-and-swap, so
 * lookups take no lock. Paths that are not ours are never kept (a program may open any number of them). */
#define ANSWER_SLOTS  4096 /* a power of two; 1024 harts x ~20 files each would not fit: those are built */
#define ANSWER_PROBES 32   /* then a full table's misses are built each time, as before */
static struct fe_answer *answers[ANSWER_SLOTS];

static uint64_t path_hash(const char *p)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a */
	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h;
}

/* The 16 KiB buffer an answer is built in, kept between builds (a first init builds some twenty answers,
 * each a malloc and free of it otherwise); a thread that finds it taken allocates its own. */
static struct fe_text *spare_text;

static struct fe_answer *build_answer(const char *path)
{
	struct fe_text *b = __atomic_exchange_n(&spare_text, NULL, __ATOMIC_ACQUIRE);
	if (!b && !(b = malloc(sizeof(*b))))
		return NULL;
	int is_dir, r = fe_file_content(path, b, &is_dir);
	size_t plen = strlen(path) + 1, tlen = r == 1 && !is_dir ? b->len : 0;
	struct fe_answer *a = r ? malloc(sizeof(*a) + tlen + plen) : NULL;
	if (a) {
		a->result = r;
		a->is_dir = is_dir;
		a->len = tlen;
		memcpy(a->text, b->text, tlen);
		a->path = a->text + tlen;
		memcpy(a->text + tlen, path, plen);
	}
	struct fe_text *none = NULL;
	if (!__atomic_compare_exchange_n(&spare_text, &none, b, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		free(b);
	return a;
}

static const struct fe_answer not_ours = {0, 0, 0, "", {0}};

const struct fe_answer *fe_file_answer(const char *path, struct fe_answer **to_free)
{
	*to_free = NULL;
	if (!path)
		return &not_ours;
	uint64_t h = path_hash(path);
	struct fe_answer *mine = NULL;
	for (unsigned probe = 0; probe < ANSWER_PROBES; probe++) {
		struct fe_answer **slot = &answers[(h + probe) & (ANSWER_SLOTS - 1)];
		struct fe_answer *a = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
		if (!a) {
			if (!mine && !(mine = build_answer(path)))
				return &not_ours; /* not ours (or out of memory: the host's file) */
			if (__atomic_compare_exchange_n(slot, &a, mine, 0, __ATOMIC_ACQ_REL,
			                                __ATOMIC_ACQUIRE))
				return mine;
			/* another thread filled the slot meanwhile: a is its entry, compared below */
		}
		if (!strcmp(a->path, path)) {
			free(mine);
			return a;
		}
	}
	if (!mine && !(mine = build_answer(path)))
		return &not_ours;
	*to_free = mine; /* the table is crowded here: this answer is the caller's */
	return mine;
}
