/* SPDX-License-Identifier: MIT */
/* perf.data writer (perfdata.h). Layout: the file header, one perf_file_attr (the attr and an empty id
 * section: with a single event, samples need no id), the data section (records), then the feature section
 * table (one perf_file_section per feature bit set) and the features' contents. */
#include "perfdata.h"
#include "rvsample.h"
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#define FEAT_CMDLINE    11
#define FEAT_EVENT_DESC 12
#define NAME_ALIGN      64

struct file_section {
	uint64_t offset, size;
};

/* magic: "PERFILE2" read as a number; its byte order tells the reader the file's */
struct file_header {
	uint64_t magic;
	uint64_t size; /* of this header */
	uint64_t attr_size;
	struct file_section attrs, data;
	// cppcheck-suppress unusedStructMember ; event_types: zero, unused since perf 2.6.37
	struct file_section event_types;
	uint64_t features[4]; /* 256 feature bits */
};

struct file_attr {
	struct perf_event_attr attr;
	struct file_section ids;
};

struct perfdata {
	FILE *f;
	int err;
	struct perf_event_attr attr;
	char event[256];
	char comm[16];
	char *cmdline; /* arguments separated by NULs */
	size_t cmdline_len;
	int argc;
	uint64_t data_start;
	uint64_t data_size;
	uint32_t *tids; /* threads already given a COMM record: open addressing, 0 = empty */
	size_t tids_cap, ntids;
};

#define PERF_MAGIC 0x32454c4946524550ULL /* "PERFILE2" */

static void put(struct perfdata *pd, const void *buf, size_t len)
{
	if (pd->err)
		return;
	if (fwrite(buf, 1, len, pd->f) != len)
		pd->err = errno ? -errno : -EIO;
}

static void put_record(struct perfdata *pd, const void *buf, size_t len)
{
	put(pd, buf, len);
	pd->data_size += len;
}

int perfdata_open(struct perfdata **out, const char *path, const struct perfdata_config *cfg)
{
	*out = NULL;
	struct perfdata *pd = calloc(1, sizeof(*pd));
	if (!pd)
		return -ENOMEM;
	pd->f = fopen(path, "wb");
	if (!pd->f) {
		int e = -errno;
		free(pd);
		return e;
	}
	snprintf(pd->event, sizeof(pd->event), "%s", cfg->event);
	snprintf(pd->comm, sizeof(pd->comm), "%s", cfg->comm);
	for (int i = 0; i < cfg->argc; i++)
		pd->cmdline_len += strlen(cfg->argv[i]) + 1;
	pd->cmdline = malloc(pd->cmdline_len + 1);
	if (!pd->cmdline) {
		fclose(pd->f);
		free(pd);
		return -ENOMEM;
	}
	char *p = pd->cmdline;
	for (int i = 0; i < cfg->argc; i++) {
		size_t l = strlen(cfg->argv[i]) + 1;
		memcpy(p, cfg->argv[i], l);
		p += l;
	}
	pd->argc = cfg->argc;

	struct perf_event_attr *a = &pd->attr;
	a->type = PERF_TYPE_RAW; /* the event is named by EVENT_DESC; its encoding is PAPI's business */
	a->size = sizeof(*a);
	a->sample_period = cfg->threshold;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
	                 (cfg->callchain ? PERF_SAMPLE_CALLCHAIN : 0);
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->mmap = 1;
	a->comm = 1;
	a->mmap2 = 1;
	a->task = 1;      /* FORK and EXIT records */
	a->comm_exec = 1; /* COMM records of an exec carry PERF_RECORD_MISC_COMM_EXEC */
	a->sample_id_all = 1;
	a->precise_ip = (unsigned)(cfg->precise < 0 ? 0 : cfg->precise > 3 ? 3 : cfg->precise);

	/* the header is rewritten at close; the attr goes right after it, the data after that */
	struct file_header h;
	memset(&h, 0, sizeof(h));
	put(pd, &h, sizeof(h));
	struct file_attr fa;
	memset(&fa, 0, sizeof(fa));
	fa.attr = *a;
	put(pd, &fa, sizeof(fa));
	pd->data_start = sizeof(h) + sizeof(fa);
	*out = pd;
	return pd->err;
}

/* The sample_id trailer of non-sample records (sample_id_all): the TID and TIME fields of sample_type. */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
};

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static int add_comm(struct perfdata *pd, uint32_t pid, uint32_t tid, int exec, uint64_t time)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		char comm[16];
		struct sample_id id;
	} rec;
	memset(&rec, 0, sizeof(rec));
	rec.h.type = PERF_RECORD_COMM;
	rec.h.misc = exec ? PERF_RECORD_MISC_COMM_EXEC : 0;
	rec.h.size = sizeof(rec);
	rec.pid = pid;
	rec.tid = tid;
	memcpy(rec.comm, pd->comm, sizeof(rec.comm) - 1);
	rec.id.pid = pid;
	rec.id.tid = tid;
	rec.id.time = time;
	put_record(pd, &rec, sizeof(rec));
	return pd->err;
}

static int add_maps(struct perfdata *pd, uint32_t pid, const struct rvsample_map *maps, size_t n,
                    uint64_t time)
{
	for (size_t i = 0; i < n; i++) {
		const struct rvsample_map *m = &maps[i];
		size_t name_len = strnlen(m->path, sizeof(m->path));
		size_t fixed = sizeof(struct perf_event_header) + 2 * 4 + 3 * 8 + 2 * 4 + 2 * 8 + 2 * 4;
		size_t size = fixed + pad8(name_len + 1) + sizeof(struct sample_id);
		unsigned char buf[sizeof(struct perf_event_header) + 64 + sizeof(m->path) + 8 + 16];
		memset(buf, 0, size);
		struct perf_event_header h = {PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, (uint16_t)size};
		struct stat st;
		memset(&st, 0, sizeof(st));
		if (stat(m->path, &st) != 0)
			memset(&st, 0, sizeof(st));
		uint32_t u32[2] = {pid, pid};
		uint64_t u64[3] = {m->start, m->end - m->start, m->offset};
		uint32_t dev[2] = {major(st.st_dev), minor(st.st_dev)};
		uint64_t ino[2] = {st.st_ino, 0};
		uint32_t prot[2] = {PROT_READ | PROT_EXEC, MAP_PRIVATE};
		unsigned char *p = buf;
		memcpy(p, &h, sizeof(h));
		p += sizeof(h);
		memcpy(p, u32, sizeof(u32));
		p += sizeof(u32);
		memcpy(p, u64, sizeof(u64));
		p += sizeof(u64);
		memcpy(p, dev, sizeof(dev));
		p += sizeof(dev);
		memcpy(p, ino, sizeof(ino));
		p += sizeof(ino);
		memcpy(p, prot, sizeof(prot));
		p += sizeof(prot);
		memcpy(p, m->path, name_len);
		p += pad8(name_len + 1);
		struct sample_id id = {pid, pid, time};
		memcpy(p, &id, sizeof(id));
		put_record(pd, buf, size);
	}
	return pd->err;
}

int perfdata_add_maps(struct perfdata *pd, uint32_t pid, const struct rvsample_map *maps, size_t n)
{
	return add_maps(pd, pid, maps, n, 0);
}

/* FORK and EXIT share a layout: { header, pid, ppid, tid, ptid, time } and the sample_id trailer. */
static int add_task(struct perfdata *pd, uint32_t type, uint32_t pid, uint32_t ppid, uint32_t ptid,
                    uint64_t time)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
		struct sample_id id;
	} rec;
	memset(&rec, 0, sizeof(rec));
	rec.h.type = type;
	rec.h.size = sizeof(rec);
	rec.pid = pid;
	rec.ppid = ppid;
	rec.tid = pid;
	rec.ptid = ptid ? ptid : ppid;
	rec.time = time;
	rec.id.pid = pid;
	rec.id.tid = pid;
	rec.id.time = time;
	put_record(pd, &rec, sizeof(rec));
	return pd->err;
}

static int new_tid(struct perfdata *pd, uint32_t tid);

int perfdata_add_process(struct perfdata *pd, const struct perfdata_process *p,
                         const struct rvsample_map *maps, size_t n)
{
	snprintf(pd->comm, sizeof(pd->comm), "%s", p->comm ? p->comm : "");
	if (p->forked)
		add_task(pd, PERF_RECORD_FORK, p->pid, p->ppid, p->ptid, p->time);
	if (new_tid(pd, p->pid) < 0 && !pd->err)
		pd->err = -ENOMEM;
	add_comm(pd, p->pid, p->pid, p->execed, p->time);
	return add_maps(pd, p->pid, maps, n, p->time);
}

int perfdata_add_exit(struct perfdata *pd, uint32_t pid, uint32_t ppid, uint64_t time)
{
	return add_task(pd, PERF_RECORD_EXIT, pid, ppid, ppid, time);
}

/* Returns 1 when tid is new (and remembers it), 0 when already seen, -1 on out of memory. */
static int new_tid(struct perfdata *pd, uint32_t tid)
{
	uint32_t key = tid + 1; /* 0 marks an empty slot */
	if ((pd->ntids + 1) * 2 > pd->tids_cap) {
		size_t cap = pd->tids_cap ? pd->tids_cap * 2 : 64;
		uint32_t *t = calloc(cap, sizeof(*t));
		if (!t)
			return -1;
		for (size_t i = 0; i < pd->tids_cap; i++) {
			if (!pd->tids[i])
				continue;
			size_t j = pd->tids[i] * 2654435761u % cap;
			while (t[j])
				j = (j + 1) % cap;
			t[j] = pd->tids[i];
		}
		free(pd->tids);
		pd->tids = t;
		pd->tids_cap = cap;
	}
	size_t j = key * 2654435761u % pd->tids_cap;
	while (pd->tids[j]) {
		if (pd->tids[j] == key)
			return 0;
		j = (j + 1) % pd->tids_cap;
	}
	pd->tids[j] = key;
	pd->ntids++;
	return 1;
}

int perfdata_add_sample(struct perfdata *pd, const struct rvsample_record *r)
{
	int fresh = new_tid(pd, r->tid);
	if (fresh < 0)
		return pd->err ? pd->err : (pd->err = -ENOMEM);
	if (fresh)
		add_comm(pd, r->pid, r->tid, 0, r->time_ns);
	uint64_t buf[6 + 1 + 1 + RVSAMPLE_MAX_FRAMES];
	size_t n = 0;
	struct perf_event_header h = {PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 0};
	if (r->flags & RVSAMPLE_F_EXACT)
		h.misc |= PERF_RECORD_MISC_EXACT_IP;
	n++; /* the header */
	buf[n++] = r->pc;
	buf[n++] = (uint64_t)r->pid | (uint64_t)r->tid << 32;
	buf[n++] = r->time_ns;
	buf[n++] = r->period;
	if (pd->attr.sample_type & PERF_SAMPLE_CALLCHAIN) {
		/* the chain: the user-context marker, then the frames innermost first (frames[0] is the PC);
		 * a record without frames gives the sampled PC alone */
		const uint64_t *ips = r->nframes ? r->frames : &r->pc;
		size_t nf =
		    r->nframes ? (r->nframes > RVSAMPLE_MAX_FRAMES ? RVSAMPLE_MAX_FRAMES : r->nframes) : 1;
		buf[n++] = nf + 1;
		buf[n++] = (uint64_t)PERF_CONTEXT_USER;
		memcpy(&buf[n], ips, nf * sizeof(*ips));
		n += nf;
	}
	h.size = (uint16_t)(n * sizeof(uint64_t));
	memcpy(&buf[0], &h, sizeof(h));
	put_record(pd, buf, n * sizeof(uint64_t));
	return pd->err;
}

int perfdata_add_lost(struct perfdata *pd, uint32_t pid, uint64_t lost)
{
	if (lost == 0)
		return pd->err;
	struct {
		struct perf_event_header h;
		// cppcheck-suppress unusedStructMember ; id: zero, the file has one event
		uint64_t id;
		uint64_t lost;
		struct sample_id sid;
	} rec;
	memset(&rec, 0, sizeof(rec));
	rec.h.type = PERF_RECORD_LOST;
	rec.h.size = sizeof(rec);
	rec.lost = lost;
	rec.sid.pid = pid;
	rec.sid.tid = pid;
	put_record(pd, &rec, sizeof(rec));
	return pd->err;
}

int perfdata_add_throttle(struct perfdata *pd, const struct rvsample_record *r, int throttle)
{
	/* { header, time, id, stream_id } and the sample_id trailer (perf_log_throttle) */
	struct {
		struct perf_event_header h;
		uint64_t time;
		// cppcheck-suppress unusedStructMember ; id, stream_id: zero, the file has one event
		uint64_t id, stream_id;
		struct sample_id sid;
	} rec;
	memset(&rec, 0, sizeof(rec));
	rec.h.type = throttle ? PERF_RECORD_THROTTLE : PERF_RECORD_UNTHROTTLE;
	rec.h.size = sizeof(rec);
	rec.time = r->time_ns;
	rec.sid.pid = r->pid;
	rec.sid.tid = r->tid;
	rec.sid.time = r->time_ns;
	put_record(pd, &rec, sizeof(rec));
	return pd->err;
}

/* perf's header string: a u32 length (the string's size with its NUL, padded to NAME_ALIGN), then the bytes.
 */
static size_t put_string(struct perfdata *pd, const char *s, size_t len)
{
	uint32_t padded = (uint32_t)((len + 1 + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN);
	char zeros[NAME_ALIGN] = {0};
	put(pd, &padded, sizeof(padded));
	put(pd, s, len);
	put(pd, zeros, padded - len);
	return sizeof(padded) + padded;
}

int perfdata_close(struct perfdata *pd)
{
	/* features: the table of sections first, then the contents, in feature-bit order */
	uint64_t table = pd->data_start + pd->data_size;
	uint64_t at = table + 2 * sizeof(struct file_section);
	struct file_section sec[2];
	if (fseek(pd->f, (long)at, SEEK_SET) != 0 && !pd->err)
		pd->err = -errno;
	/* CMDLINE: u32 count, then one string per argument */
	uint32_t argc = (uint32_t)pd->argc;
	size_t size = sizeof(argc);
	put(pd, &argc, sizeof(argc));
	for (const char *p = pd->cmdline; p < pd->cmdline + pd->cmdline_len; p += strlen(p) + 1)
		size += put_string(pd, p, strlen(p));
	sec[0] = (struct file_section){at, size};
	at += size;
	/* EVENT_DESC: u32 events, u32 attr size, then per event its attr, u32 ids, its name, the ids */
	uint32_t hdr[2] = {1, sizeof(pd->attr)};
	uint32_t nr_ids = 0;
	put(pd, hdr, sizeof(hdr));
	put(pd, &pd->attr, sizeof(pd->attr));
	put(pd, &nr_ids, sizeof(nr_ids));
	size = sizeof(hdr) + sizeof(pd->attr) + sizeof(nr_ids) + put_string(pd, pd->event, strlen(pd->event));
	sec[1] = (struct file_section){at, size};
	if (fseek(pd->f, (long)table, SEEK_SET) != 0 && !pd->err)
		pd->err = -errno;
	put(pd, sec, sizeof(sec));

	struct file_header h;
	memset(&h, 0, sizeof(h));
	h.magic = PERF_MAGIC;
	h.size = sizeof(h);
	h.attr_size = sizeof(struct file_attr);
	h.attrs = (struct file_section){sizeof(h), sizeof(struct file_attr)};
	h.data = (struct file_section){pd->data_start, pd->data_size};
	h.features[0] = 1ull << FEAT_CMDLINE | 1ull << FEAT_EVENT_DESC;
	if (fseek(pd->f, 0, SEEK_SET) != 0 && !pd->err)
		pd->err = -errno;
	put(pd, &h, sizeof(h));
	if (fflush(pd->f) != 0 && !pd->err)
		pd->err = -errno;
	if (fclose(pd->f) != 0 && !pd->err)
		pd->err = -errno;
	int err = pd->err;
	free(pd->tids);
	free(pd->cmdline);
	free(pd);
	return err;
}
