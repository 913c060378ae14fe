// SPDX-License-Identifier: MIT
/* Sample files (sampling/rvsample_file.c, docs/sampling-api.md): a written file reads back the same, and the
 * reader turns every damaged file (not ours, newer, cut anywhere, bytes changed, absurd counts, bytes after
 * the end) into RVSAMPLE_EFORMAT with a message, never a crash or an allocation the file asked for. */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sample_test.h"

void sample_tmp_path(char *buf, size_t len, const char *what)
{
	const char *dir = getenv("TMPDIR");
	snprintf(buf, len, "%s/rvsample-test-%d-%s", dir && *dir ? dir : "/tmp", (int)getpid(), what);
}

static int same_record(const struct rvsample_record *a, const struct rvsample_record *b)
{
	if (a->pc != b->pc || a->time_ns != b->time_ns || a->pid != b->pid || a->tid != b->tid ||
	    a->cpu != b->cpu || a->flags != b->flags || a->period != b->period || a->nvalues != b->nvalues ||
	    a->nframes != b->nframes)
		return 0;
	return !memcmp(a->values, b->values, a->nvalues * sizeof(a->values[0])) &&
	       !memcmp(a->frames, b->frames, a->nframes * sizeof(a->frames[0]));
}

int sample_round_trip(const char *path, const struct rvsample_file_info *info,
                      const struct rvsample_record *recs, size_t n, int with_maps)
{
	rvsample_writer_t *w;
	int bad = 0;
	if (rvsample_writer_open(&w, path, info) != RVSAMPLE_OK)
		return -1;
	if (with_maps)
		bad |= rvsample_writer_add_maps(w) != RVSAMPLE_OK;
	/* in uneven pieces, so records cross the writer's calls */
	for (size_t i = 0; i < n;) {
		size_t k = (i % 7) + 1 < n - i ? (i % 7) + 1 : n - i;
		bad |= rvsample_writer_add(w, recs + i, k) != RVSAMPLE_OK;
		i += k;
	}
	bad |= rvsample_writer_close(w) != RVSAMPLE_OK;
	rvsample_reader_t *r;
	struct rvsample_file_info got;
	if (bad || rvsample_reader_open(&r, path, &got) != RVSAMPLE_OK)
		return -1;
	bad |= got.nevents != info->nevents || got.sampling_event != info->sampling_event ||
	       got.threshold != info->threshold || got.precise != info->precise || got.mode != info->mode;
	for (uint32_t i = 0; i < info->nevents && i < got.nevents; i++)
		bad |= strcmp(got.events[i], info->events[i]) != 0;
	struct rvsample_record buf[5];
	size_t seen = 0;
	ssize_t k;
	while ((k = rvsample_reader_read(r, buf, 5)) > 0) {
		for (ssize_t j = 0; j < k; j++, seen++)
			bad |= seen >= n || !same_record(&buf[j], &recs[seen]);
	}
	bad |= k != 0 || seen != n;
	size_t nmaps;
	const struct rvsample_map *maps = rvsample_reader_maps(r, &nmaps);
	if (with_maps) {
		/* this program's own text is among the executable mappings */
		char self[4096];
		ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);
		int found = 0;
		self[l > 0 ? l : 0] = 0;
		for (size_t i = 0; i < nmaps; i++)
			found |= !strcmp(maps[i].path, self) && maps[i].start < maps[i].end;
		bad |= !found;
	} else {
		bad |= nmaps != 0;
	}
	rvsample_reader_close(r);
	return bad ? -1 : 0;
}

static struct rvsample_file_info test_info(void)
{
	struct rvsample_file_info info;
	memset(&info, 0, sizeof(info));
	info.nevents = 3;
	strcpy(info.events[0], "PAPI_TOT_CYC");
	strcpy(info.events[1], "PAPI_TOT_INS");
	strcpy(info.events[2], "riscv_openhwgroup_cva6::L1_DCACHE_MISS");
	info.sampling_event = 0;
	info.threshold = 100000;
	info.precise = 2;
	info.mode = RVSAMPLE_STACKS;
	return info;
}

static void test_records(struct rvsample_record *r, size_t n)
{
	memset(r, 0, n * sizeof(*r));
	for (size_t i = 0; i < n; i++) {
		r[i].pc = 0x10000 + i * 4;
		r[i].time_ns = 1000 * i + 0x123456789abcull;
		r[i].pid = 4242;
		r[i].tid = 4243 + (uint32_t)(i % 3);
		r[i].cpu = (uint32_t)i % 4;
		r[i].flags = RVSAMPLE_F_EXACT | (i % 2 ? RVSAMPLE_F_STACK : 0);
		r[i].period = 100000;
		r[i].nvalues = 3;
		for (int k = 0; k < 3; k++)
			r[i].values[k] = (i + 1) * 100000 * (uint64_t)(k + 1) + UINT64_C(0xff00000000000000);
		r[i].nframes = (uint32_t)(i % (RVSAMPLE_MAX_FRAMES + 1));
		for (uint32_t k = 0; k < r[i].nframes; k++)
			r[i].frames[k] = r[i].pc + 0x100 * k;
	}
}

static void test_round_trip(void)
{
	char path[512];
	sample_tmp_path(path, sizeof(path), "roundtrip");
	struct rvsample_file_info info = test_info();
	static struct rvsample_record recs[100];
	test_records(recs, 100);
	CU_ASSERT_EQUAL(sample_round_trip(path, &info, recs, 100, 1), 0);
	CU_ASSERT_EQUAL(sample_round_trip(path, &info, recs, 0, 0), 0); /* an empty file is a file */
	info.nevents = 8;
	info.sampling_event = 7;
	for (int i = 3; i < 8; i++)
		snprintf(info.events[i], sizeof(info.events[i]), "EVENT_%d", i);
	CU_ASSERT_EQUAL(sample_round_trip(path, &info, recs, 100, 0), 0);
	unlink(path);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

static void spit(const char *path, const unsigned char *b, size_t len)
{
	FILE *f = fopen(path, "wb");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(fwrite(b, 1, len, f), len);
	fclose(f);
}

/* Opens and reads a whole file: RVSAMPLE_OK, or the first error. */
static int read_all(const char *path, size_t *nrec)
{
	rvsample_reader_t *r;
	struct rvsample_file_info info;
	struct rvsample_record buf[16];
	*nrec = 0;
	int e = rvsample_reader_open(&r, path, &info);
	if (e)
		return e;
	ssize_t k;
	while ((k = rvsample_reader_read(r, buf, 16)) > 0)
		*nrec += (size_t)k;
	rvsample_reader_close(r);
	return k < 0 ? (int)k : RVSAMPLE_OK;
}

static void write_valid(const char *path, size_t n)
{
	struct rvsample_file_info info = test_info();
	static struct rvsample_record recs[40];
	test_records(recs, n);
	rvsample_writer_t *w;
	CU_ASSERT_EQUAL_FATAL(rvsample_writer_open(&w, path, &info), RVSAMPLE_OK);
	CU_ASSERT_EQUAL(rvsample_writer_add(w, recs, n / 2), RVSAMPLE_OK);
	CU_ASSERT_EQUAL(rvsample_writer_add_maps(w), RVSAMPLE_OK);
	CU_ASSERT_EQUAL(rvsample_writer_add(w, recs + n / 2, n - n / 2), RVSAMPLE_OK);
	CU_ASSERT_EQUAL(rvsample_writer_close(w), RVSAMPLE_OK);
}

/* Foreign, empty, newer: refused at open with a message that says which. */
static void test_foreign_and_newer(void)
{
	char path[512], bad[512];
	size_t n, len;
	sample_tmp_path(path, sizeof(path), "valid");
	sample_tmp_path(bad, sizeof(bad), "bad");
	write_valid(path, 40);
	CU_ASSERT_EQUAL(read_all(path, &n), RVSAMPLE_OK);
	CU_ASSERT_EQUAL(n, 40);
	unsigned char *b = slurp(path, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);

	spit(bad, b, 0);
	CU_ASSERT_EQUAL(read_all(bad, &n), RVSAMPLE_EFORMAT);
	const char *text = "PERFILE2 is what perf.data starts with, not us: a foreign file of some length\n";
	spit(bad, (const unsigned char *)text, strlen(text));
	CU_ASSERT_EQUAL(read_all(bad, &n), RVSAMPLE_EFORMAT);
	CU_ASSERT_PTR_NOT_NULL(strstr(rvsample_strerror(RVSAMPLE_EFORMAT), "not an rvsample file"));

	b[8] = 2; /* version 2 */
	spit(bad, b, len);
	CU_ASSERT_EQUAL(read_all(bad, &n), RVSAMPLE_EFORMAT);
	CU_ASSERT_PTR_NOT_NULL(strstr(rvsample_strerror(RVSAMPLE_EFORMAT), "newer"));
	b[8] = 1;

	/* an absurd number of records or maps in a chunk header: refused, nothing that size allocated */
	size_t first =
	    40 + 3 * 128; /* header of 3 events, then the first chunk: u32 type, u32 count, u64 bytes */
	unsigned char save[16];
	memcpy(save, b + first, 16);
	memset(b + first + 4, 0xff, 4);
	spit(bad, b, len);
	CU_ASSERT_EQUAL(read_all(bad, &n), RVSAMPLE_EFORMAT);
	memset(b + first + 8, 0xff, 8);
	spit(bad, b, len);
	CU_ASSERT_EQUAL(read_all(bad, &n), RVSAMPLE_EFORMAT);
	memcpy(b + first, save, 16);

	/* bytes after the end chunk */
	unsigned char *longer = malloc(len + 3);
	CU_ASSERT_PTR_NOT_NULL_FATAL(longer);
	memcpy(longer, b, len);
	memcpy(longer + len, "xyz", 3);
	spit(bad, longer, len + 3);
	CU_ASSERT_EQUAL(read_all(bad, &n), RVSAMPLE_EFORMAT);
	free(longer);

	CU_ASSERT_EQUAL(read_all("/nonexistent/rvsample/file", &n), RVSAMPLE_ESYS);
	free(b);
	unlink(path);
	unlink(bad);
}

/* Cut at every length: each prefix is refused (the end chunk is missing or cut). */
static void test_truncated(void)
{
	char path[512], bad[512];
	size_t n, len;
	sample_tmp_path(path, sizeof(path), "valid");
	sample_tmp_path(bad, sizeof(bad), "cut");
	write_valid(path, 12);
	unsigned char *b = slurp(path, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	unsigned refused = 0;
	for (size_t cut = 0; cut < len; cut++) {
		spit(bad, b, cut);
		refused += read_all(bad, &n) == RVSAMPLE_EFORMAT;
	}
	CU_ASSERT_EQUAL(refused, len);
	free(b);
	unlink(path);
	unlink(bad);
}

/* Changed bytes anywhere: the reader either reads records or says EFORMAT; it never crashes (this test runs
 * under ASan too) and never returns anything else. */
static void test_corrupted(void)
{
	char path[512], bad[512];
	size_t n, len;
	sample_tmp_path(path, sizeof(path), "valid");
	sample_tmp_path(bad, sizeof(bad), "corrupt");
	write_valid(path, 12);
	unsigned char *b = slurp(path, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	static const unsigned char patterns[] = {0x00, 0xff, 0x80, 0x01, 0x7f};
	unsigned other = 0, refused = 0;
	for (size_t at = 0; at < len; at++) {
		for (size_t p = 0; p < sizeof(patterns); p++) {
			unsigned char keep = b[at];
			if (keep == patterns[p])
				continue;
			b[at] = patterns[p];
			spit(bad, b, len);
			int e = read_all(bad, &n);
			b[at] = keep;
			refused += e == RVSAMPLE_EFORMAT;
			other += e != RVSAMPLE_EFORMAT && e != RVSAMPLE_OK;
		}
	}
	CU_ASSERT_EQUAL(other, 0);
	CU_ASSERT(refused > 0);
	printf("\n  %zu bytes x 5 patterns: %u refused with RVSAMPLE_EFORMAT, the rest read\n", len, refused);
	free(b);
	unlink(path);
	unlink(bad);
}

static void test_writer_errors(void)
{
	struct rvsample_file_info info = test_info();
	rvsample_writer_t *w;
	CU_ASSERT_EQUAL(rvsample_writer_open(&w, "/nonexistent/dir/x.rvs", &info), RVSAMPLE_ESYS);
	CU_ASSERT_PTR_NOT_NULL(strstr(rvsample_strerror(RVSAMPLE_ESYS), "/nonexistent/dir/x.rvs"));
	CU_ASSERT_EQUAL(rvsample_writer_open(NULL, "/tmp/x", &info), RVSAMPLE_EINVAL);
	info.nevents = RVSAMPLE_MAX_VALUES + 1;
	CU_ASSERT_EQUAL(rvsample_writer_open(&w, "/tmp/x", &info), RVSAMPLE_EINVAL);
	info = test_info();
	info.sampling_event = 3;
	CU_ASSERT_EQUAL(rvsample_writer_open(&w, "/tmp/x", &info), RVSAMPLE_EINVAL);
	info = test_info();
	info.threshold = 0;
	CU_ASSERT_EQUAL(rvsample_writer_open(&w, "/tmp/x", &info), RVSAMPLE_EINVAL);
	info = test_info();
	/* a full disk: the error comes at close at the latest */
	if (access("/dev/full", W_OK) == 0) {
		static struct rvsample_record recs[40];
		test_records(recs, 40);
		CU_ASSERT_EQUAL_FATAL(rvsample_writer_open(&w, "/dev/full", &info), RVSAMPLE_OK);
		int add = rvsample_writer_add(w, recs, 40);
		CU_ASSERT(add == RVSAMPLE_OK || add == RVSAMPLE_ESYS);
		CU_ASSERT_EQUAL(rvsample_writer_close(w), RVSAMPLE_ESYS);
	}
	char path[512];
	sample_tmp_path(path, sizeof(path), "badrec");
	CU_ASSERT_EQUAL_FATAL(rvsample_writer_open(&w, path, &info), RVSAMPLE_OK);
	struct rvsample_record r;
	memset(&r, 0, sizeof(r));
	r.nvalues = RVSAMPLE_MAX_VALUES + 1;
	CU_ASSERT_EQUAL(rvsample_writer_add(w, &r, 1), RVSAMPLE_EINVAL);
	r.nvalues = 0;
	r.nframes = RVSAMPLE_MAX_FRAMES + 1;
	CU_ASSERT_EQUAL(rvsample_writer_add(w, &r, 1), RVSAMPLE_EINVAL);
	CU_ASSERT_EQUAL(rvsample_writer_close(w), RVSAMPLE_OK);
	size_t n;
	CU_ASSERT_EQUAL(read_all(path, &n), RVSAMPLE_OK);
	CU_ASSERT_EQUAL(n, 0); /* the refused records were not written */
	unlink(path);
	CU_ASSERT_EQUAL(rvsample_reader_close(NULL), RVSAMPLE_EINVAL);
	CU_ASSERT_EQUAL(rvsample_writer_close(NULL), RVSAMPLE_EINVAL);
}

/* A process that forks while it writes (rvprof's agent in a program that forks): the child's exit() flushes
 * its copy of whatever stdio holds, into the same file offset. The writer must hold nothing there: the
 * parent's file still reads back whole. */
static void test_fork_while_writing(void)
{
	char path[512];
	sample_tmp_path(path, sizeof(path), "fork");
	struct rvsample_file_info info = test_info();
	static struct rvsample_record recs[30];
	test_records(recs, 30);
	rvsample_writer_t *w;
	CU_ASSERT_EQUAL_FATAL(rvsample_writer_open(&w, path, &info), RVSAMPLE_OK);
	CU_ASSERT_EQUAL(rvsample_writer_add(w, recs, 10), RVSAMPLE_OK);
	fflush(stdout); /* the test's own output: printed once (not fflush(NULL), which would flush the
	                   writer's) */
	fflush(stderr);
	pid_t pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0)
		exit(0); /* exit(), not _exit(): stdio's buffers are flushed */
	int status = -1;
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CU_ASSERT_EQUAL(rvsample_writer_add(w, recs + 10, 20), RVSAMPLE_OK);
	CU_ASSERT_EQUAL(rvsample_writer_close(w), RVSAMPLE_OK);
	size_t n = 0;
	CU_ASSERT_EQUAL(read_all(path, &n), RVSAMPLE_OK);
	CU_ASSERT_EQUAL(n, 30);
	unlink(path);
}

void add_file_suites(void)
{
	CU_pSuite s = CU_add_suite("sample files", NULL, NULL);
	CU_add_test(s, "write, read back: the same header, records and maps", test_round_trip);
	CU_add_test(s, "foreign, empty, newer, absurd counts, trailing bytes: RVSAMPLE_EFORMAT",
	            test_foreign_and_newer);
	CU_add_test(s, "cut at every length: RVSAMPLE_EFORMAT", test_truncated);
	CU_add_test(s, "any byte changed: records or RVSAMPLE_EFORMAT, never a crash", test_corrupted);
	CU_add_test(s, "writer: bad arguments, unwritable path, full disk", test_writer_errors);
	CU_add_test(s, "a fork while writing: the child's exit adds nothing to the file",
	            test_fork_while_writing);
}
