// SPDX-License-Identifier: GPL-2.0-only
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* ---- output: never blocks the vCPU, drops when nobody reads ---------- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Bytes come out in order, through a pipe someone reads. */
START_TEST(test_output_in_order)
{
	struct console *c = calloc(1, sizeof(*c));
	char got[300];
	int p[2], i;
	size_t n = 0;

	ck_assert_int_eq(pipe(p), 0);
	console__init(c, -1, p[1]);
	ck_assert_int_eq(console__start(c), 0);
	for (i = 0; i < 300; i++)
		console__tx(c, 'a' + i % 26);
	while (n < sizeof(got)) {
		ssize_t r = read(p[0], got + n, sizeof(got) - n);

		ck_assert_int_gt(r, 0);
		n += r;
	}
	console__stop(c);
	for (i = 0; i < 300; i++)
		ck_assert_int_eq(got[i], 'a' + i % 26);
	ck_assert_uint_eq(c->dropped, 0);
	close(p[0]);
	close(p[1]);
	free(c);
}
END_TEST

/*
 * A reader that stopped (a pipe nobody reads, full after 64 KiB): the UART
 * goes on at full speed, the bytes past the buffer are dropped and counted,
 * and stopping the console does not hang.
 */
START_TEST(test_output_reader_gone)
{
	struct console *c = calloc(1, sizeof(*c));
	const size_t total = 512 * 1024;
	double t0;
	size_t i;
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	console__init(c, -1, p[1]);
	ck_assert_int_eq(console__start(c), 0);
	t0 = now();
	for (i = 0; i < total; i++)
		console__tx(c, 'x');
	ck_assert_msg(now() - t0 < 2.0, "the UART was held up %.1f s",
		      now() - t0);
	t0 = now();
	console__stop(c);
	ck_assert_msg(now() - t0 < 3.0, "stopping took %.1f s", now() - t0);
	/* pipe (64 KiB) + buffer + a chunk in flight at most got through */
	ck_assert_uint_ge(c->dropped, total - 3 * CONSOLE_OUT_BUF);
	ck_assert_uint_le(c->dropped, total);
	close(p[0]);
	close(p[1]);
	free(c);
}
END_TEST

/* Bytes before the thread starts wait in the buffer. */
START_TEST(test_output_before_start)
{
	struct console *c = calloc(1, sizeof(*c));
	char got[3];
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	console__init(c, -1, p[1]);
	console__tx(c, 'h');
	console__tx(c, 'i');
	console__tx(c, '\n');
	ck_assert_int_eq(console__start(c), 0);
	console__stop(c);
	ck_assert_int_eq(read(p[0], got, 3), 3);
	ck_assert(!memcmp(got, "hi\n", 3));
	close(p[0]);
	close(p[1]);
	free(c);
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

	tc = tcase_create("output");
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_output_in_order);
	tcase_add_test(tc, test_output_reader_gone);
	tcase_add_test(tc, test_output_before_start);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(console_suite());
}
