/* SPDX-License-Identifier: MIT */
/* The leading literal characters of an ERE, which the perf cpuid matchers compare before they match
 * (riscv_ere_literal_prefix in the PAPI component, pfm_riscv_ere_literal_prefix in libpfm4): one table of
 * cases for the tests of both, so the two cannot drift apart. A string regexec matches in full always
 * begins with its pattern's prefix, which the tests check on ERE_PREFIX_STRINGS. */
#ifndef ERE_PREFIX_CASES_H
#define ERE_PREFIX_CASES_H

#include <stddef.h>

static const struct ere_prefix_case {
	const char *pattern;
	size_t prefix; /* how many leading characters are literal */
} ERE_PREFIX_CASES[] = {{"0x[[:xdigit:]]+", 2},
                        {"abc", 3},
                        {"ab?c", 1},
                        {"ab*", 1},
                        {"ab+c", 1},
                        {"ab{2}", 1},
                        {"x*", 0},
                        {"a|b", 0},
                        {"ab|cd", 0},
                        {"(ab)c", 0},
                        {"a(b|c)", 0},
                        {"^ab", 0},
                        {"ab$", 2},
                        {"a\\.b", 1},
                        {"a.c", 1},
                        {"[ab]c", 0},
                        {"a]b", 1},
                        {"", 0},
                        {"0x489-0x8000000000000[1-9a-e]07", 21},
                        {"0x5b7-0x0-0x0", 13}};

/* Strings to match the patterns against: some begin with a pattern's prefix, some do not. */
static const char *const ERE_PREFIX_STRINGS[] = {"",
                                                 "a",
                                                 "ab",
                                                 "abc",
                                                 "abbc",
                                                 "ac",
                                                 "c",
                                                 "b",
                                                 "cd",
                                                 "abab",
                                                 "a.b",
                                                 "axb",
                                                 "a]b",
                                                 "x",
                                                 "0x",
                                                 "0xff",
                                                 "0x489-0x8000000000000707",
                                                 "0x489-0x8000000000000007",
                                                 "0x489-0x8000000000000f07",
                                                 "0x5b7-0x0-0x0"};

#define ERE_PREFIX_NCASES   (sizeof(ERE_PREFIX_CASES) / sizeof(ERE_PREFIX_CASES[0]))
#define ERE_PREFIX_NSTRINGS (sizeof(ERE_PREFIX_STRINGS) / sizeof(ERE_PREFIX_STRINGS[0]))

#endif
