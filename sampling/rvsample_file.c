// SPDX-License-Identifier: MIT
/* librvsample's sample files (docs/sampling-api.md, "Sample files"): a versioned header, then chunks of
 * executable mappings and of records, then an end chunk with the totals. Every field is little-endian and
 * fixed-width, written byte by byte, so a file reads the same on any host. The reader checks the whole
 * structure when it opens a file and each record when it reads it: a foreign, newer, truncated or corrupt
 * file gives RVSAMPLE_EFORMAT with the offset and what was wrong (rvsample_strerror). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "rvsample_priv.h"

#define MAGIC           "RVSAMPLE"
#define FORMAT_VERSION  1u
#define HEADER_FIXED    40u
#define NAME_BYTES      128u
#define CHUNK_HEADER    16u
#define CHUNK_MAPS      1u
#define CHUNK_RECORDS   2u
#define CHUNK_END       3u
#define RECORD_FIXED    48u
#define MAP_FIXED       32u
#define END_PAYLOAD     16u
#define MAX_CHUNK_BYTES (1u << 30)
#define MAX_MAPS        (1u << 16) /* in the whole file: a process has a few hundred executable maps */
#define CHUNK_FLUSH     (1u << 20) /* a records chunk is written when its payload reaches 1 MiB */

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v = 0;
	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* ------------------------------------------------------------------------------------------ writer */
/* Written with write(2), not stdio: a process that forks while it writes must not leave a copy of buffered
 * bytes in the child, which its exit() would flush into the same file (and file offset). */
struct rvsample_writer {
	int fd;
	char *path;
	unsigned char *chunk; /* records chunk being filled: payload only */
	size_t len, size;
	uint32_t count;
	uint64_t records, maps;
	int error; /* errno of the first failed write */
};

static void w_write(struct rvsample_writer *w, const void *p, size_t n)
{
	const unsigned char *b = p;
	while (!w->error && n > 0) {
		ssize_t k = write(w->fd, b, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			w->error = k < 0 ? errno : EIO;
			break;
		}
		b += k;
		n -= (size_t)k;
	}
}

static void w_chunk_header(struct rvsample_writer *w, uint32_t type, uint32_t count, uint64_t bytes)
{
	unsigned char h[CHUNK_HEADER];
	put32(h, type);
	put32(h + 4, count);
	put64(h + 8, bytes);
	w_write(w, h, sizeof(h));
}

static void w_flush_records(struct rvsample_writer *w)
{
	if (!w->count)
		return;
	w_chunk_header(w, CHUNK_RECORDS, w->count, w->len);
	w_write(w, w->chunk, w->len);
	w->len = 0;
	w->count = 0;
}

static int check_info(const struct rvsample_file_info *info)
{
	if (!info)
		return rvsample_fail(RVSAMPLE_EINVAL, "file info is NULL");
	if (info->nevents < 1 || info->nevents > RVSAMPLE_MAX_VALUES)
		return rvsample_fail(RVSAMPLE_EINVAL, "nevents %u: 1..%d", info->nevents,
		                     RVSAMPLE_MAX_VALUES);
	if (info->sampling_event < 0 || (uint32_t)info->sampling_event >= info->nevents)
		return rvsample_fail(RVSAMPLE_EINVAL, "sampling_event %d: 0..%u", info->sampling_event,
		                     info->nevents - 1);
	if (info->threshold == 0 || info->precise < 0 || info->precise > 3)
		return rvsample_fail(RVSAMPLE_EINVAL, "threshold %" PRIu64 " / precise %d: want > 0 / 0..3",
		                     info->threshold, info->precise);
	if (info->mode != RVSAMPLE_BATCH && info->mode != RVSAMPLE_STACKS)
		return rvsample_fail(RVSAMPLE_EINVAL, "mode %d: RVSAMPLE_BATCH or RVSAMPLE_STACKS",
		                     (int)info->mode);
	for (uint32_t i = 0; i < info->nevents; i++)
		if (!memchr(info->events[i], 0, NAME_BYTES))
			return rvsample_fail(RVSAMPLE_EINVAL, "event name %u is not NUL-terminated", i);
	return 0;
}

int rvsample_writer_open(rvsample_writer_t **writer, const char *path, const struct rvsample_file_info *info)
{
	if (!writer || !path)
		return rvsample_fail(RVSAMPLE_EINVAL, "rvsample_writer_open: NULL argument");
	*writer = NULL;
	int r = check_info(info);
	if (r)
		return r;
	struct rvsample_writer *w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(path))) {
		free(w);
		return rvsample_fail(RVSAMPLE_ESYS, "out of memory");
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (w->fd < 0) {
		int e = errno;
		free(w->path);
		free(w);
		return rvsample_fail(RVSAMPLE_ESYS, "%s: %s", path, strerror(e));
	}
	unsigned char h[HEADER_FIXED + RVSAMPLE_MAX_VALUES * NAME_BYTES];
	memset(h, 0, sizeof(h));
	memcpy(h, MAGIC, 8);
	put32(h + 8, FORMAT_VERSION);
	put32(h + 12, HEADER_FIXED + info->nevents * NAME_BYTES);
	put32(h + 16, info->nevents);
	put32(h + 20, (uint32_t)info->sampling_event);
	put64(h + 24, info->threshold);
	put32(h + 32, (uint32_t)info->precise);
	put32(h + 36, (uint32_t)info->mode);
	for (uint32_t i = 0; i < info->nevents; i++)
		strncpy((char *)h + HEADER_FIXED + i * NAME_BYTES, info->events[i], NAME_BYTES - 1);
	w_write(w, h, HEADER_FIXED + info->nevents * NAME_BYTES);
	*writer = w;
	return RVSAMPLE_OK;
}

int rvsample_writer_add(rvsample_writer_t *w, const struct rvsample_record *records, size_t n)
{
	if (!w || (!records && n))
		return rvsample_fail(RVSAMPLE_EINVAL, "rvsample_writer_add: NULL argument");
	for (size_t i = 0; i < n; i++) {
		const struct rvsample_record *r = &records[i];
		if (r->nvalues > RVSAMPLE_MAX_VALUES || r->nframes > RVSAMPLE_MAX_FRAMES)
			return rvsample_fail(
			    RVSAMPLE_EINVAL, "record %zu: %u values / %u frames (at most %d / %d)", i,
			    r->nvalues, r->nframes, RVSAMPLE_MAX_VALUES, RVSAMPLE_MAX_FRAMES);
	}
	for (size_t i = 0; i < n; i++) {
		const struct rvsample_record *r = &records[i];
		size_t need = RECORD_FIXED + 8 * ((size_t)r->nvalues + r->nframes);
		if (w->len + need > w->size) {
			size_t size = w->size ? w->size : 64 * 1024;
			while (size < w->len + need)
				size *= 2;
			unsigned char *c = realloc(w->chunk, size);
			if (!c)
				return rvsample_fail(RVSAMPLE_ESYS, "out of memory");
			w->chunk = c;
			w->size = size;
		}
		unsigned char *p = w->chunk + w->len;
		put64(p, r->pc);
		put64(p + 8, r->time_ns);
		put32(p + 16, r->pid);
		put32(p + 20, r->tid);
		put32(p + 24, r->cpu);
		put32(p + 28, r->flags);
		put64(p + 32, r->period);
		put32(p + 40, r->nvalues);
		put32(p + 44, r->nframes);
		p += RECORD_FIXED;
		for (uint32_t k = 0; k < r->nvalues; k++, p += 8)
			put64(p, r->values[k]);
		for (uint32_t k = 0; k < r->nframes; k++, p += 8)
			put64(p, r->frames[k]);
		w->len += need;
		w->count++;
		w->records++;
		if (w->len >= CHUNK_FLUSH)
			w_flush_records(w);
	}
	return w->error ? rvsample_fail(RVSAMPLE_ESYS, "%s: %s", w->path, strerror(w->error)) : RVSAMPLE_OK;
}

int rvsample_writer_add_maps(rvsample_writer_t *w)
{
	if (!w)
		return rvsample_fail(RVSAMPLE_EINVAL, "rvsample_writer_add_maps: writer is NULL");
	/* /proc/self/maps first: qemu-user shows its guest its own mappings there, but not in
	 * /proc/thread-self/maps (qemu's). Once a process's main thread has ended (pthread_exit), /proc/self
	 * (its leader) shows no mappings at all: then the calling thread's view. */
	static const char *const paths[] = {"/proc/self/maps", "/proc/thread-self/maps"};
	size_t cap = 0, len = 0;
	uint32_t count = 0;
	unsigned char *buf = NULL;
	char line[4096 + 256];
	int oom = 0;
	for (size_t attempt = 0; attempt < sizeof(paths) / sizeof(paths[0]) && count == 0 && !oom;
	     attempt++) {
		FILE *m = fopen(paths[attempt], "r");
		if (!m) {
			if (attempt == 0) {
				free(buf);
				return rvsample_fail(RVSAMPLE_ESYS, "%s: %s", paths[attempt],
				                     strerror(errno));
			}
			break; /* a kernel before 3.17 has no /proc/thread-self */
		}
		while (fgets(line, sizeof(line), m)) {
			unsigned long long start, end, offset;
			char perms[8];
			int pos = 0;
			if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &offset,
			           &pos) < 4 ||
			    strlen(perms) < 3 || perms[2] != 'x')
				continue;
			char *path = line + pos;
			path[strcspn(path, "\n")] = 0;
			size_t plen = strlen(path);
			if (plen == 0 || plen >= sizeof(((struct rvsample_map *)0)->path))
				continue; /* anonymous code (a JIT): no file to name its symbols */
			size_t need = MAP_FIXED + ((plen + 7) & ~(size_t)7);
			if (len + need > cap) {
				size_t ncap = cap ? cap * 2 : 16384;
				while (ncap < len + need)
					ncap *= 2;
				unsigned char *b = realloc(buf, ncap);
				if (!b) {
					oom = 1;
					break;
				}
				buf = b;
				cap = ncap;
			}
			unsigned char *p = buf + len;
			memset(p, 0, need);
			put64(p, start);
			put64(p + 8, end);
			put64(p + 16, offset);
			put32(p + 24, (uint32_t)plen);
			memcpy(p + MAP_FIXED, path, plen);
			len += need;
			count++;
		}
		fclose(m);
	}
	if (oom) {
		free(buf);
		return rvsample_fail(RVSAMPLE_ESYS, "out of memory");
	}
	w_flush_records(w); /* the chunks stay in the order of the calls */
	w_chunk_header(w, CHUNK_MAPS, count, len);
	if (len)
		w_write(w, buf, len);
	free(buf);
	w->maps += count;
	return w->error ? rvsample_fail(RVSAMPLE_ESYS, "%s: %s", w->path, strerror(w->error)) : RVSAMPLE_OK;
}

int rvsample_writer_close(rvsample_writer_t *w)
{
	if (!w)
		return rvsample_fail(RVSAMPLE_EINVAL, "rvsample_writer_close: writer is NULL");
	w_flush_records(w);
	unsigned char end[END_PAYLOAD];
	put64(end, w->records);
	put64(end + 8, w->maps);
	w_chunk_header(w, CHUNK_END, 0, sizeof(end));
	w_write(w, end, sizeof(end));
	if (close(w->fd) != 0 && !w->error)
		w->error = errno ? errno : EIO;
	int r = w->error ? rvsample_fail(RVSAMPLE_ESYS, "%s: %s", w->path, strerror(w->error)) : RVSAMPLE_OK;
	free(w->chunk);
	free(w->path);
	free(w);
	return r;
}

/* ------------------------------------------------------------------------------------------ reader */
struct rvsample_reader {
	FILE *f;
	char *path;
	struct rvsample_map *maps;
	size_t nmaps, maps_cap;
	off_t first_chunk, pos; /* pos: where the next unread byte is */
	uint32_t left;          /* records left in the current records chunk */
	uint64_t chunk_left;    /* its payload bytes not read yet */
	int done;
};

static int bad(const struct rvsample_reader *r, off_t at, const char *what)
{
	return rvsample_fail(RVSAMPLE_EFORMAT, "%s: at byte %lld: %s", r->path, (long long)at, what);
}

static int r_read(struct rvsample_reader *r, void *p, size_t n, const char *what)
{
	if (fread(p, 1, n, r->f) != n)
		return bad(r, r->pos, what);
	r->pos += (off_t)n;
	return 0;
}

static int r_seek(struct rvsample_reader *r, off_t to)
{
	if (fseeko(r->f, to, SEEK_SET) != 0)
		return rvsample_fail(RVSAMPLE_ESYS, "%s: seek: %s", r->path, strerror(errno));
	r->pos = to;
	return 0;
}

static int read_header(struct rvsample_reader *r, struct rvsample_file_info *info)
{
	unsigned char h[HEADER_FIXED];
	if (r_read(r, h, sizeof(h), "shorter than a sample file header (not a sample file, or truncated)"))
		return RVSAMPLE_EFORMAT;
	if (memcmp(h, MAGIC, 8) != 0)
		return bad(r, 0, "no RVSAMPLE magic: not an rvsample file");
	uint32_t version = get32(h + 8), hbytes = get32(h + 12), n = get32(h + 16);
	if (version != FORMAT_VERSION) {
		char msg[128];
		snprintf(msg, sizeof(msg), "format version %u; this reader knows version %u%s", version,
		         FORMAT_VERSION, version > FORMAT_VERSION ? " (the file is newer)" : "");
		return bad(r, 8, msg);
	}
	if (n < 1 || n > RVSAMPLE_MAX_VALUES || hbytes != HEADER_FIXED + n * NAME_BYTES)
		return bad(r, 12, "header size or event count out of range");
	memset(info, 0, sizeof(*info));
	info->nevents = n;
	info->sampling_event = (int32_t)get32(h + 20);
	info->threshold = get64(h + 24);
	info->precise = (int32_t)get32(h + 32);
	uint32_t mode = get32(h + 36);
	if (info->sampling_event < 0 || (uint32_t)info->sampling_event >= n || info->threshold == 0 ||
	    info->precise < 0 || info->precise > 3 || mode > RVSAMPLE_STACKS)
		return bad(r, 20, "sampling event, threshold, precision or mode out of range");
	info->mode = (enum rvsample_mode)mode;
	for (uint32_t i = 0; i < n; i++) {
		if (r_read(r, info->events[i], NAME_BYTES, "truncated in the event names"))
			return RVSAMPLE_EFORMAT;
		if (!memchr(info->events[i], 0, NAME_BYTES))
			return bad(r, r->pos - NAME_BYTES, "event name not NUL-terminated");
	}
	return 0;
}

static int read_maps(struct rvsample_reader *r, uint32_t count, uint64_t bytes)
{
	if (count > MAX_MAPS - r->nmaps)
		return bad(r, r->pos - CHUNK_HEADER, "more than 65536 mappings in the file");
	if (bytes < (uint64_t)count * MAP_FIXED)
		return bad(r, r->pos - CHUNK_HEADER, "maps chunk: count and size disagree");
	uint64_t used = 0;
	for (uint32_t i = 0; i < count; i++) {
		unsigned char f[MAP_FIXED];
		if (r_read(r, f, sizeof(f), "truncated in a maps chunk"))
			return RVSAMPLE_EFORMAT;
		if (r->nmaps == r->maps_cap) { /* grows with what the file really holds */
			size_t cap = r->maps_cap ? 2 * r->maps_cap : 16;
			struct rvsample_map *m = realloc(r->maps, cap * sizeof(*m));
			if (!m)
				return rvsample_fail(RVSAMPLE_ESYS, "out of memory for %zu maps", cap);
			r->maps = m;
			r->maps_cap = cap;
		}
		struct rvsample_map *e = &r->maps[r->nmaps];
		memset(e, 0, sizeof(*e));
		e->start = get64(f);
		e->end = get64(f + 8);
		e->offset = get64(f + 16);
		uint32_t plen = get32(f + 24);
		uint64_t padded = ((uint64_t)plen + 7) & ~(uint64_t)7;
		used += MAP_FIXED + padded;
		if (plen == 0 || plen >= sizeof(e->path) || used > bytes || e->end < e->start)
			return bad(r, r->pos - MAP_FIXED, "a map with a bad path length or address range");
		if (r_read(r, e->path, plen, "truncated in a map's path"))
			return RVSAMPLE_EFORMAT;
		if (memchr(e->path, 0, plen))
			return bad(r, r->pos - plen, "a map's path contains a NUL byte");
		if (r_seek(r, r->pos + (off_t)(padded - plen)))
			return RVSAMPLE_ESYS;
		r->nmaps++;
	}
	if (used != bytes)
		return bad(r, r->pos, "maps chunk: its size does not match its maps");
	return 0;
}

/* Walks every chunk once: maps are read, records chunks skipped (their records are checked when read),
 * the end chunk must come last, with the right totals, at the end of the file. */
static int scan(struct rvsample_reader *r)
{
	uint64_t records = 0;
	for (;;) {
		unsigned char h[CHUNK_HEADER];
		off_t at = r->pos;
		if (r_read(r, h, sizeof(h), "truncated: no end chunk (the writer did not close the file)"))
			return RVSAMPLE_EFORMAT;
		uint32_t type = get32(h), count = get32(h + 4);
		uint64_t bytes = get64(h + 8);
		if (bytes > MAX_CHUNK_BYTES)
			return bad(r, at, "chunk larger than 1 GiB");
		if (type == CHUNK_MAPS) {
			int e = read_maps(r, count, bytes);
			if (e)
				return e;
		} else if (type == CHUNK_RECORDS) {
			if (count == 0 || bytes < (uint64_t)count * RECORD_FIXED)
				return bad(r, at, "records chunk: count and size disagree");
			records += count;
			if (r_seek(r, r->pos + (off_t)bytes))
				return RVSAMPLE_ESYS;
		} else if (type == CHUNK_END) {
			unsigned char e[END_PAYLOAD];
			if (count != 0 || bytes != END_PAYLOAD)
				return bad(r, at, "end chunk of the wrong size");
			if (r_read(r, e, sizeof(e), "truncated in the end chunk"))
				return RVSAMPLE_EFORMAT;
			if (get64(e) != records || get64(e + 8) != r->nmaps)
				return bad(r, at, "end chunk totals do not match the chunks before it");
			if (fgetc(r->f) != EOF)
				return bad(r, r->pos, "data after the end chunk");
			return 0;
		} else {
			return bad(r, at, "unknown chunk type (a newer writer, or not a sample file)");
		}
	}
}

int rvsample_reader_open(rvsample_reader_t **reader, const char *path, struct rvsample_file_info *info)
{
	if (!reader || !path || !info)
		return rvsample_fail(RVSAMPLE_EINVAL, "rvsample_reader_open: NULL argument");
	*reader = NULL;
	struct rvsample_reader *r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(path))) {
		free(r);
		return rvsample_fail(RVSAMPLE_ESYS, "out of memory");
	}
	r->f = fopen(path, "rb");
	int e;
	if (!r->f) {
		e = rvsample_fail(RVSAMPLE_ESYS, "%s: %s", path, strerror(errno));
	} else {
		e = read_header(r, info);
		r->first_chunk = r->pos;
		if (!e)
			e = scan(r);
		if (!e)
			e = r_seek(r, r->first_chunk);
	}
	if (e) {
		rvsample_reader_close(r);
		return e;
	}
	*reader = r;
	return RVSAMPLE_OK;
}

static int next_records_chunk(struct rvsample_reader *r)
{
	for (;;) {
		unsigned char h[CHUNK_HEADER];
		if (r_read(r, h, sizeof(h), "truncated chunk header (the file changed after it was opened)"))
			return RVSAMPLE_EFORMAT;
		uint32_t type = get32(h), count = get32(h + 4);
		uint64_t bytes = get64(h + 8);
		if (type == CHUNK_END) {
			r->done = 1;
			return 0;
		}
		if (type == CHUNK_RECORDS && count > 0 && bytes <= MAX_CHUNK_BYTES) {
			r->left = count;
			r->chunk_left = bytes;
			return 0;
		}
		if (type != CHUNK_MAPS || bytes > MAX_CHUNK_BYTES)
			return bad(r, r->pos - CHUNK_HEADER,
			           "bad chunk (the file changed after it was opened)");
		if (r_seek(r, r->pos + (off_t)bytes))
			return RVSAMPLE_ESYS;
	}
}

static int read_record(struct rvsample_reader *r, struct rvsample_record *rec)
{
	unsigned char f[RECORD_FIXED];
	off_t at = r->pos;
	if (r->chunk_left < RECORD_FIXED)
		return bad(r, at, "a record overruns its chunk");
	if (r_read(r, f, sizeof(f), "truncated in a record"))
		return RVSAMPLE_EFORMAT;
	memset(rec, 0, sizeof(*rec));
	rec->pc = get64(f);
	rec->time_ns = get64(f + 8);
	rec->pid = get32(f + 16);
	rec->tid = get32(f + 20);
	rec->cpu = get32(f + 24);
	rec->flags = get32(f + 28);
	rec->period = get64(f + 32);
	rec->nvalues = get32(f + 40);
	rec->nframes = get32(f + 44);
	if (rec->nvalues > RVSAMPLE_MAX_VALUES || rec->nframes > RVSAMPLE_MAX_FRAMES)
		return bad(r, at, "a record with too many values or frames");
	uint64_t need = RECORD_FIXED + 8 * ((uint64_t)rec->nvalues + rec->nframes);
	if (need > r->chunk_left)
		return bad(r, at, "a record overruns its chunk");
	unsigned char v[8 * (RVSAMPLE_MAX_VALUES + RVSAMPLE_MAX_FRAMES)];
	size_t nv = 8 * ((size_t)rec->nvalues + rec->nframes);
	if (r_read(r, v, nv, "truncated in a record's values"))
		return RVSAMPLE_EFORMAT;
	for (uint32_t k = 0; k < rec->nvalues; k++)
		rec->values[k] = get64(v + 8 * k);
	for (uint32_t k = 0; k < rec->nframes; k++)
		rec->frames[k] = get64(v + 8 * (rec->nvalues + k));
	r->chunk_left -= need;
	if (--r->left == 0 && r->chunk_left != 0)
		return bad(r, r->pos, "a records chunk has bytes after its last record");
	return 0;
}

ssize_t rvsample_reader_read(rvsample_reader_t *r, struct rvsample_record *buf, size_t max)
{
	if (!r || (!buf && max))
		return rvsample_fail(RVSAMPLE_EINVAL, "rvsample_reader_read: NULL argument");
	size_t n = 0;
	while (n < max && !r->done) {
		if (r->left == 0) {
			int e = next_records_chunk(r);
			if (e)
				return e;
			continue;
		}
		int e = read_record(r, &buf[n]);
		if (e)
			return e;
		n++;
	}
	return (ssize_t)n;
}

const struct rvsample_map *rvsample_reader_maps(const rvsample_reader_t *r, size_t *n)
{
	if (n)
		*n = r ? r->nmaps : 0;
	return r ? r->maps : NULL;
}

int rvsample_reader_close(rvsample_reader_t *r)
{
	if (!r)
		return rvsample_fail(RVSAMPLE_EINVAL, "rvsample_reader_close: reader is NULL");
	if (r->f)
		fclose(r->f);
	free(r->maps);
	free(r->path);
	free(r);
	return RVSAMPLE_OK;
}
