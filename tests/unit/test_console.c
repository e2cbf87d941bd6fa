// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "console.h"
#include "unit.h"

static struct console con;

static void setup(void)
{
	console__init(&con, -1, -1);
	con.raw = true;	/* the escape is only live on a raw terminal */
}

START_TEST(test_plain_bytes_pass)
{
	uint8_t out[8];
	bool quit;

	ck_assert_uint_eq(console__filter_input(&con, (uint8_t *)"ls\r", 3, out,
						&quit), 3);
	ck_assert_mem_eq(out, "ls\r", 3);
	ck_assert(!quit);
}
END_TEST

START_TEST(test_escape_x_quits)
{
	uint8_t out[8];
	bool quit;

	ck_assert_uint_eq(console__filter_input(&con, (uint8_t *)"a\001xb", 4,
						out, &quit), 1);
	ck_assert(quit);
}
END_TEST

START_TEST(test_escape_split_across_reads)
{
	uint8_t out[8];
	bool quit;

	ck_assert_uint_eq(console__filter_input(&con, (uint8_t *)"\001", 1, out,
						&quit), 0);
	ck_assert(!quit);
	console__filter_input(&con, (uint8_t *)"x", 1, out, &quit);
	ck_assert(quit);
}
END_TEST

START_TEST(test_double_escape_sends_one)
{
	uint8_t out[8];
	bool quit;

	ck_assert_uint_eq(console__filter_input(&con, (uint8_t *)"\001\001z", 3,
						out, &quit), 2);
	ck_assert_uint_eq(out[0], 1);
	ck_assert_uint_eq(out[1], 'z');
	ck_assert(!quit);
}
END_TEST

START_TEST(test_not_raw_passes_escape)
{
	uint8_t out[8];
	bool quit;

	con.raw = false;
	ck_assert_uint_eq(console__filter_input(&con, (uint8_t *)"\001x", 2,
						out, &quit), 2);
	ck_assert(!quit);
}
END_TEST

static Suite *console_suite(void)
{
	Suite *s = suite_create("console");
	TCase *tc = tcase_create("escape");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_plain_bytes_pass);
	tcase_add_test(tc, test_escape_x_quits);
	tcase_add_test(tc, test_escape_split_across_reads);
	tcase_add_test(tc, test_double_escape_sends_one);
	tcase_add_test(tc, test_not_raw_passes_escape);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(console_suite());
}
