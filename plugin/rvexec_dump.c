// SPDX-License-Identifier: MIT
/* rvexec-dump FILE: prints the count file of the exec-count plugin (rvexec_shm.h), one line per thread and
 * mode, in the plugin's out= format. Reads while the plugin may still write (a live view). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rvexec_print.h"

int main(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(
		    stderr,
		    "usage: rvexec-dump COUNT_FILE  (the plugin's shm= file, e.g. /dev/shm/rvexec.1234)\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "rvexec-dump: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (st.st_size < (off_t)sizeof(struct rvexec_shm_header)) {
		fprintf(stderr, "rvexec-dump: %s: not a count file (shorter than the header)\n", argv[1]);
		close(fd);
		return 1;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		fprintf(stderr, "rvexec-dump: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	const char *bad = rvexec_check_header(m, (uint64_t)st.st_size);
	if (bad) {
		fprintf(stderr, "rvexec-dump: %s: %s\n", argv[1], bad);
		munmap(m, (size_t)st.st_size);
		return 1;
	}
	rvexec_print(stdout, m);
	munmap(m, (size_t)st.st_size);
	return ferror(stdout) ? 1 : 0;
}
