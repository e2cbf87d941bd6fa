/* SPDX-License-Identifier: GPL-2.0 */
/* Command-line lists of the pin/ tools (gpin-bench, gpin-dio-bench). */
#ifndef GPIN_TOOLS_CLI_H
#define GPIN_TOOLS_CLI_H

#define CLI_LIST_MAX	8

struct cli_list {
	unsigned int n;
	unsigned long v[CLI_LIST_MAX];
};

/* cli_parse_list() flags: numbers may end in k or m (KiB, MiB) */
#define CLI_SIZES	(1U << 0)

/*
 * A comma-separated list of at most CLI_LIST_MAX items into @l: indices
 * into @names (@nnames words) when @names is set, else positive numbers.
 * 0, or -1 for a bad, empty or too long list.
 */
int cli_parse_list(const char *arg, struct cli_list *l,
		   const char *const *names, unsigned int nnames,
		   unsigned int flags);

#endif /* GPIN_TOOLS_CLI_H */
