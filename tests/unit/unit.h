/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared main for the unit tests: run one suite, exit non-zero on failure. */
#ifndef GPIN_UNIT_H
#define GPIN_UNIT_H

#include <check.h>
#include <stdlib.h>

static inline int unit_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif /* GPIN_UNIT_H */
