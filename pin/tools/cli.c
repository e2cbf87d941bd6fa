// SPDX-License-Identifier: GPL-2.0
/* Command-line lists of the pin/ tools: see cli.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int parse_word(const char *tok, const char *const *names,
		      unsigned int nnames, unsigned long *v)
{
	for (*v = 0; *v < nnames; (*v)++)
		if (!strcmp(tok, names[*v]))
			return 0;
	return -1;
}

static int parse_number(const char *tok, unsigned int flags,
			unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(tok, &end, 10);
	if (errno || end == tok || !*v)
		return -1;
	if ((flags & CLI_SIZES) && (*end == 'k' || *end == 'K'))
		*v <<= 10, end++;
	else if ((flags & CLI_SIZES) && (*end == 'm' || *end == 'M'))
		*v <<= 20, end++;
	return *end ? -1 : 0;
}

int cli_parse_list(const char *arg, struct cli_list *l,
		   const char *const *names, unsigned int nnames,
		   unsigned int flags)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int bad = !copy;

	l->n = 0;
	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !bad;
	     tok = strtok_r(NULL, ",", &save)) {
		if (l->n == CLI_LIST_MAX) {
			bad = 1;
			break;
		}
		bad = names ? parse_word(tok, names, nnames, &l->v[l->n]) :
			      parse_number(tok, flags, &l->v[l->n]);
		l->n++;
	}
	free(copy);
	return bad || !l->n ? -1 : 0;
}
