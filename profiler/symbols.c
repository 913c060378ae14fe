/* SPDX-License-Identifier: MIT */
/* Symbol resolution for rvprof (symbols.h): a PC lies in a recorded mapping; its offset in the mapped file
 * lies in one PT_LOAD segment, which gives the link-time address; the function is the STT_FUNC symbol (or,
 * without one, the STT_NOTYPE/STT_GNU_IFUNC symbol) whose [value, value + size) holds that address. */
#include "symbols.h"
#include "rvsample.h"
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where separate debug files live (Debian's *-dbg packages; gdb's and perf's default). */
#ifndef DEBUG_ROOT
#define DEBUG_ROOT "/usr/lib/debug"
#endif

struct fsym {
	uint64_t addr, size; /* link-time address */
	char *name;
};

struct seg {
	uint64_t offset, filesz, vaddr;
};

struct module {
	char *path;
	const char *base;
	int loaded, usable;
	struct seg *segs;
	size_t nsegs;
	struct fsym *syms;
	size_t nsyms;
};

struct pmap {
	uint64_t start, end, offset;
	struct module *mod;
};

struct prof_symbols {
	struct pmap *maps;
	size_t nmaps;
	struct module *mods;
	size_t nmods;
};

static int cmp_map(const void *a, const void *b)
{
	const struct pmap *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static size_t underscores(const char *s)
{
	size_t n = 0;
	while (s[n] == '_')
		n++;
	return n;
}

/* By address; among symbols at one address (aliases such as __getpid and getpid), the one find_sym should
 * name sorts last: the largest (the enclosing function), then the fewest leading underscores. */
static int cmp_sym(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	size_t ux = underscores(x->name), uy = underscores(y->name);
	if (ux != uy)
		return ux > uy ? -1 : 1;
	return strcmp(y->name, x->name);
}

struct prof_symbols *prof_symbols_new(const struct rvsample_map *maps, size_t nmaps)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	struct prof_symbols *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->maps = calloc(nmaps ? nmaps : 1, sizeof(*s->maps));
	s->mods = calloc(nmaps ? nmaps : 1, sizeof(*s->mods));
	if (!s->maps || !s->mods) {
		prof_symbols_free(s);
		return NULL;
	}
	for (size_t i = 0; i < nmaps; i++) {
		struct module *m = NULL;
		for (size_t j = 0; j < s->nmods; j++)
			if (strcmp(s->mods[j].path, maps[i].path) == 0)
				m = &s->mods[j];
		if (!m) {
			m = &s->mods[s->nmods];
			m->path = strdup(maps[i].path);
			if (!m->path) {
				prof_symbols_free(s);
				return NULL;
			}
			s->nmods++;
			const char *slash = strrchr(m->path, '/');
			m->base = slash && slash[1] ? slash + 1 : m->path;
		}
		s->maps[s->nmaps++] = (struct pmap){maps[i].start, maps[i].end, maps[i].offset, m};
	}
	qsort(s->maps, s->nmaps, sizeof(*s->maps), cmp_map);
	return s;
}

/* Adds the function symbols of one table (SHT_SYMTAB or SHT_DYNSYM) to the module's. */
static void read_symtab(struct module *m, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data || sh->sh_entsize == 0 || sh->sh_type == SHT_NOBITS)
		return;
	size_t n = sh->sh_size / sh->sh_entsize;
	struct fsym *syms = realloc(m->syms, (m->nsyms + n + 1) * sizeof(*syms));
	if (!syms)
		return;
	m->syms = syms;
	size_t k = m->nsyms;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
			continue;
		int type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		const char *name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		syms[k].addr = sym.st_value;
		syms[k].size = sym.st_size;
		syms[k].name = strdup(name);
		if (syms[k].name)
			k++;
	}
	qsort(syms, k, sizeof(*syms), cmp_sym);
	m->nsyms = k;
}

/* The symbol tables of an ELF file, and its GNU build ID (NULL, 0 if it has none). */
struct elf_tables {
	Elf_Scn *symtab, *dynsym, *debuglink;
	GElf_Shdr sh_symtab, sh_dynsym, sh_debuglink;
	const unsigned char *build_id;
	size_t build_id_len;
};

static void find_tables(Elf *elf, struct elf_tables *t)
{
	memset(t, 0, sizeof(*t));
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_SYMTAB) {
			t->symtab = scn;
			t->sh_symtab = sh;
		} else if (sh.sh_type == SHT_DYNSYM) {
			t->dynsym = scn;
			t->sh_dynsym = sh;
		} else if (sh.sh_type == SHT_PROGBITS && name && strcmp(name, ".gnu_debuglink") == 0) {
			t->debuglink = scn;
			t->sh_debuglink = sh;
		} else if (sh.sh_type == SHT_NOTE && !t->build_id) {
			Elf_Data *data = elf_getdata(scn, NULL);
			GElf_Nhdr nh;
			size_t off = 0, name_off, desc_off;
			while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
				if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
				    memcmp((const char *)data->d_buf + name_off, "GNU", 4) == 0) {
					t->build_id = (const unsigned char *)data->d_buf + desc_off;
					t->build_id_len = nh.n_descsz;
					break;
				}
			}
		}
	}
}

/* CRC-32 (IEEE 802.3, as zlib's crc32) of a file: what .gnu_debuglink records of its debug file. */
static int file_crc32(int fd, uint32_t *out)
{
	uint32_t crc = 0xffffffffu;
	unsigned char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++) {
			crc ^= buf[i];
			for (int b = 0; b < 8; b++)
				crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
		}
	*out = ~crc;
	return n < 0 ? -1 : 0;
}

/* Opens the separate debug file of a module where gdb and perf look for one (Debian's *-dbg packages put
 * them there): /usr/lib/debug/.build-id/xx/rest.debug by build ID, else the .gnu_debuglink name next to
 * the module, in its .debug/ folder and under /usr/lib/debug. A candidate must carry the module's build ID
 * or, for a module without one, the CRC its debuglink records. Returns an fd or -1. */
static int open_debug_file(const struct module *m, Elf *elf, const struct elf_tables *t)
{
	char path[PATH_MAX];
	if (t->build_id && t->build_id_len >= 2 && t->build_id_len <= 64) {
		int len = snprintf(path, sizeof(path), "%s/.build-id/%02x/", DEBUG_ROOT, t->build_id[0]);
		for (size_t i = 1; i < t->build_id_len && len > 0 && (size_t)len < sizeof(path) - 3; i++)
			len += snprintf(path + len, sizeof(path) - (size_t)len, "%02x", t->build_id[i]);
		snprintf(path + len, sizeof(path) - (size_t)len, ".debug");
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
	}
	if (!t->debuglink)
		return -1;
	Elf_Data *data = elf_getdata(t->debuglink, NULL);
	if (!data || data->d_size < 8)
		return -1;
	const char *name = data->d_buf;
	size_t name_len = strnlen(name, data->d_size);
	if (name_len == 0 || name_len >= data->d_size || strchr(name, '/'))
		return -1;
	uint32_t want_crc;
	size_t crc_off = (name_len + 4) & ~(size_t)3; /* the name, its NUL, padding to 4 bytes */
	if (crc_off + 4 > data->d_size)
		return -1;
	memcpy(&want_crc, (const char *)data->d_buf + crc_off, 4);
	if (elf_getident(elf, NULL)[EI_DATA] !=
	    (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB))
		want_crc = __builtin_bswap32(want_crc);
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%.*s", (int)(m->base - m->path), m->path); /* with its trailing '/' */
	const char *const formats[] = {"%s%s", "%s.debug/%s", DEBUG_ROOT "%s%s"};
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (snprintf(path, sizeof(path), formats[i], dir, name) >= (int)sizeof(path) ||
		    strcmp(path, m->path) == 0)
			continue;
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		uint32_t crc;
		if (file_crc32(fd, &crc) == 0 && crc == want_crc && lseek(fd, 0, SEEK_SET) == 0)
			return fd;
		close(fd);
	}
	return -1;
}

/* Adds the .symtab of the module's separate debug file, if it has one: the functions a stripped library
 * keeps out of its .dynsym (libc's __libc_start_call_main, static functions), as perf names them. */
static void read_debug_file(struct module *m, Elf *elf, const struct elf_tables *t)
{
	int fd = open_debug_file(m, elf, t);
	if (fd < 0)
		return;
	Elf *dbg = elf_begin(fd, ELF_C_READ, NULL);
	if (dbg && elf_kind(dbg) == ELF_K_ELF) {
		struct elf_tables dt;
		find_tables(dbg, &dt);
		int same = !t->build_id || (dt.build_id && dt.build_id_len == t->build_id_len &&
		                            memcmp(dt.build_id, t->build_id, t->build_id_len) == 0);
		if (same && dt.symtab)
			read_symtab(m, dbg, dt.symtab, &dt.sh_symtab);
	}
	if (dbg)
		elf_end(dbg);
	close(fd);
}

static void load_module(struct module *m)
{
	m->loaded = 1;
	int fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(fd);
		return;
	}
	size_t nph = 0;
	if (elf_getphdrnum(elf, &nph) == 0 && nph > 0) {
		m->segs = calloc(nph, sizeof(*m->segs));
		for (size_t i = 0; m->segs && i < nph; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
				m->segs[m->nsegs++] = (struct seg){ph.p_offset, ph.p_filesz, ph.p_vaddr};
		}
	}
	/* as perf: the module's .symtab, else its .dynsym and its separate debug file's .symtab */
	struct elf_tables t;
	find_tables(elf, &t);
	if (t.symtab)
		read_symtab(m, elf, t.symtab, &t.sh_symtab);
	if (m->nsyms == 0) {
		if (t.dynsym)
			read_symtab(m, elf, t.dynsym, &t.sh_dynsym);
		read_debug_file(m, elf, &t);
	}
	m->usable = m->nsegs > 0;
	elf_end(elf);
	close(fd);
}

static const struct fsym *find_sym(const struct module *m, uint64_t addr)
{
	/* the last symbol starting at or below addr */
	size_t lo = 0, hi = m->nsyms;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* walk back over nested/aliased symbols: the first one whose range holds addr */
	for (size_t i = lo; i-- > 0;) {
		const struct fsym *f = &m->syms[i];
		if (addr < f->addr + (f->size ? f->size : 1))
			return f;
		if (i + 8 < lo) /* symbols far below cannot hold it unless huge: bounded search */
			break;
	}
	return NULL;
}

int prof_symbols_resolve(struct prof_symbols *s, uint64_t pc, struct prof_sym *out)
{
	memset(out, 0, sizeof(*out));
	out->module = "[unknown]";
	const struct pmap *map = NULL;
	size_t lo = 0, hi = s->nmaps;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->maps[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && pc < s->maps[lo - 1].end)
		map = &s->maps[lo - 1];
	if (!map)
		return -1;
	struct module *m = map->mod;
	out->module = m->base;
	out->path = m->path;
	out->map_start = map->start;
	if (!m->loaded)
		load_module(m);
	if (!m->usable)
		return -1;
	uint64_t off = pc - map->start + map->offset;
	for (size_t i = 0; i < m->nsegs; i++) {
		const struct seg *g = &m->segs[i];
		if (off < g->offset || off >= g->offset + g->filesz)
			continue;
		uint64_t vaddr = off - g->offset + g->vaddr;
		const struct fsym *f = find_sym(m, vaddr);
		if (!f)
			return -1;
		out->name = f->name;
		out->sym_addr = pc - (vaddr - f->addr);
		return 0;
	}
	return -1;
}

const char *prof_sym_label(const struct prof_sym *sym, char *buf, size_t len)
{
	if (sym->name)
		snprintf(buf, len, "%s", sym->name);
	else if (sym->path)
		snprintf(buf, len, "[unknown] (%s)", sym->module);
	else
		snprintf(buf, len, "[unknown]");
	return buf;
}

void prof_symbols_free(struct prof_symbols *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nmods; i++) {
		for (size_t j = 0; j < s->mods[i].nsyms; j++)
			free(s->mods[i].syms[j].name);
		free(s->mods[i].syms);
		free(s->mods[i].segs);
		free(s->mods[i].path);
	}
	free(s->mods);
	free(s->maps);
	free(s);
}
