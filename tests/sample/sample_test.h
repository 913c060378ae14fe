/* SPDX-License-Identifier: MIT */
/* Shared by the librvsample tests: the sampler suites run under the emulator, the file suites anywhere. */
#ifndef SAMPLE_TEST_H
#define SAMPLE_TEST_H
#include <stddef.h>

#include "rvsample.h"

/* test_sample_file.c */
void add_file_suites(void);
/* Writes records to a file and reads them back: 0 when every field came back the same. */
int sample_round_trip(const char *path, const struct rvsample_file_info *info,
                      const struct rvsample_record *recs, size_t n, int with_maps);
/* A scratch file name in $TMPDIR (or /tmp), unique to this process. */
void sample_tmp_path(char *buf, size_t len, const char *what);
#endif
