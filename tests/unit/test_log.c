// SPDX-License-Identifier: GPL-2.0-only
/* log.h: the prefix, the levels, whole lines; err__set(). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "unit.h"

/* Runs @fn with stderr in a file; returns what it wrote (static buffer). */
static const char *capture(void (*fn)(void))
{
	static char buf[4096];
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	ck_assert_ptr_nonnull(tmp);
	fflush(stderr);
	ck_assert_int_ge(dup2(fileno(tmp), STDERR_FILENO), 0);
	fn();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, sizeof(buf) - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
	return buf;
}

static void all_levels(void)
{
	pr_err("an error %d", 1);
	pr_warn("a warning");
	pr_info("some info");
	pr_debug("a detail");
}

START_TEST(test_default_level)
{
	log__set_level(LOG_LEVEL_INFO);
	ck_assert_str_eq(capture(all_levels),
			 "gpin-vmm: an error 1\n"
			 "gpin-vmm: a warning\n"
			 "gpin-vmm: some info\n");
}
END_TEST

START_TEST(test_quiet)
{
	log__set_level(LOG_LEVEL_WARN);
	ck_assert_str_eq(capture(all_levels),
			 "gpin-vmm: an error 1\ngpin-vmm: a warning\n");
}
END_TEST

START_TEST(test_verbose)
{
	log__set_level(LOG_LEVEL_DEBUG);
	ck_assert_ptr_nonnull(strstr(capture(all_levels),
				     "gpin-vmm: a detail\n"));
}
END_TEST

static void long_line(void)
{
	char text[3000];

	memset(text, 'x', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	pr_err("%s", text);
}

/* A message longer than a line is cut, and still ends the line. */
START_TEST(test_long_message)
{
	const char *out;

	log__set_level(LOG_LEVEL_INFO);
	out = capture(long_line);
	ck_assert_uint_lt(strlen(out), 1100);
	ck_assert_int_eq(strncmp(out, "gpin-vmm: xxx", 13), 0);
	ck_assert_ptr_eq(strchr(out, '\n'), out + strlen(out) - 1);
}
END_TEST

START_TEST(test_err_set)
{
	char err[8] = "";

	ck_assert_int_eq(err__set(err, sizeof(err), "%s %d", "reason", 42), -1);
	ck_assert_str_eq(err, "reason ");	/* cut to the buffer */
	ck_assert_int_eq(err__set(NULL, 0, "nowhere"), -1);
}
END_TEST

static Suite *log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("log");

	tcase_add_test(tc, test_default_level);
	tcase_add_test(tc, test_quiet);
	tcase_add_test(tc, test_verbose);
	tcase_add_test(tc, test_long_message);
	tcase_add_test(tc, test_err_set);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(log_suite());
}
