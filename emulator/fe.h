/* SPDX-License-Identifier: MIT */
/* Between the front ends' own files only. */
#ifndef EMU_FE_H
#define EMU_FE_H
#include <stddef.h>

/* The text of a served /proc or /sys file. */
struct fe_text {
	char text[16384];
	size_t len;
};
/* 1: `path` is ours and b holds its text (or *is_dir); 0: not ours; -ENOENT: hidden host entry. */
int fe_file_content(const char *path, struct fe_text *b, int *is_dir);
/* The entries of a served directory (readdir order) into names[max]: their number, 0 when the directory
 * is not one whose listing we serve, -ENOENT when it does not exist on this machine. */
#define FE_NAME_MAX 32
int fe_dir_listing(const char *path, char names[][FE_NAME_MAX], int max);

#endif
