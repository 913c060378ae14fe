/* SPDX-License-Identifier: MIT */
/* Text form of a count file (rvexec_shm.h), shared by the plugin's out= summary and rvexec-dump. */
#ifndef RVEXEC_PRINT_H
#define RVEXEC_PRINT_H

#include <stdint.h>
#include <stdio.h>

#include "rvexec_shm.h"

/* The name of counter i in lower case ("instret", "l1d_read_miss"), or NULL past the list. */
const char *rvexec_count_name(unsigned i);

/* Checks that a mapped file of file_size bytes is a count file this reader understands; returns NULL or
 * what is wrong. */
const char *rvexec_check_header(const struct rvexec_shm_header *h, uint64_t file_size);

/* One line per used slot and mode with non-zero counts:
 * "thread tid=T state=live|exited mode=user|supervisor instret=... cycles=... <name>=<value>..." after a line
 * "rvexec model=M freq_mhz=F slots=N". */
void rvexec_print(FILE *out, const struct rvexec_shm_header *h);

#endif
