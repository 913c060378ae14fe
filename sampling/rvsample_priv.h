/* SPDX-License-Identifier: MIT */
/* librvsample internals shared by the sampler (rvsample.c) and the sample files (rvsample_file.c). */
#ifndef RVSAMPLE_PRIV_H
#define RVSAMPLE_PRIV_H
#include "rvsample.h"

/* Records `code` with a detailed message for rvsample_strerror() in the calling thread; returns `code`. */
int rvsample_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
