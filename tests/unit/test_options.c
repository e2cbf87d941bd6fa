// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <string.h>

#include "arch/x86/layout.h"
#include "options.h"
#include "unit.h"

#define MAX_ARGS 16

static int parse(struct vm_options *o, char *err, ...)
{
	char *argv[MAX_ARGS] = { "gpin-vmm" };
	int argc = 1;
	va_list ap;
	char *a;

	va_start(ap, err);
	while ((a = va_arg(ap, char *)) && argc < MAX_ARGS - 1)
		argv[argc++] = a;
	va_end(ap);
	return options__parse(o, argc, argv, err, 256);
}

START_TEST(test_defaults)
{
	struct vm_options o;
	char err[256];

	ck_assert_int_eq(parse(&o, err, "--kernel", "bz", NULL), 0);
	ck_assert_str_eq(o.vm.kernel, "bz");
	ck_assert_str_eq(o.vm.initrd, "");
	ck_assert_str_eq(o.vm.cmdline, DEFAULT_CMDLINE);
	ck_assert_uint_eq(o.vm.ncpus, 1);
	ck_assert_uint_eq(o.vm.mem_size, DEFAULT_MEM);
}
END_TEST

START_TEST(test_all_options)
{
	struct vm_options o;
	char err[256];

	ck_assert_int_eq(parse(&o, err, "--kernel", "bz", "--initrd", "rd",
			       "--params", "console=ttyS0 quiet", "--cpus", "64",
			       "--mem", "2G", NULL), 0);
	ck_assert_str_eq(o.vm.initrd, "rd");
	ck_assert_str_eq(o.vm.cmdline, "console=ttyS0 quiet");
	ck_assert_uint_eq(o.vm.ncpus, 64);
	ck_assert_uint_eq(o.vm.mem_size, 2ULL << 30);
	ck_assert_int_eq(parse(&o, err, "-k", "bz", "-c", "2", "-m", "512",
			       "-p", "quiet", NULL), 0);
	ck_assert_uint_eq(o.vm.ncpus, 2);
	ck_assert_uint_eq(o.vm.mem_size, 512ULL << 20);
	ck_assert_str_eq(o.vm.cmdline, "quiet");
}
END_TEST

/*
 * kvmtool's letters since 0.2 (-c vCPUs, -p the command line): the old
 * use of -c, a command line, fails saying so; --cmdline still works.
 */
START_TEST(test_kvmtool_letters)
{
	struct vm_options o;
	char err[256];

	ck_assert_int_eq(parse(&o, err, "-k", "bz", "-c", "console=ttyS0",
			       NULL), -1);
	ck_assert_ptr_nonnull(strstr(err, "-p, --params"));
	ck_assert_int_eq(parse(&o, err, "-k", "bz", "-c", "99", NULL), -1);
	ck_assert_ptr_null(strstr(err, "--params"));
	ck_assert_int_eq(parse(&o, err, "-k", "bz", "--cmdline", "quiet",
			       NULL), 0);
	ck_assert_str_eq(o.vm.cmdline, "quiet");
	/* an old -p N: taken as the command line it now is (and warned) */
	ck_assert_int_eq(parse(&o, err, "-k", "bz", "-p", "4", NULL), 0);
	ck_assert_str_eq(o.vm.cmdline, "4");
	ck_assert_uint_eq(o.vm.ncpus, 1);
}
END_TEST

/* The exit port is a test hook: off unless asked for, with any route. */
START_TEST(test_test_exit_port)
{
	struct vm_options o;
	char err[256];

	ck_assert_int_eq(parse(&o, err, "-k", "bz", NULL), 0);
	ck_assert(!o.vm.test_exit_port);
	ck_assert_int_eq(parse(&o, err, "-k", "bz", "--test-exit-port", NULL),
			 0);
	ck_assert(o.vm.test_exit_port);
	ck_assert_int_eq(parse(&o, err, "--domain", "d.xml",
			       "--test-exit-port", NULL), 0);
	ck_assert(o.vm.test_exit_port);
	ck_assert_int_eq(parse(&o, err, "--api-socket", "fd=3",
			       "--test-exit-port", NULL), 0);
	ck_assert(o.vm.test_exit_port);
}
END_TEST

START_TEST(test_log_level)
{
	struct vm_options o;
	char err[256];

	ck_assert_int_eq(parse(&o, err, "-k", "bz", NULL), 0);
	ck_assert_int_eq(o.log_level, LOG_LEVEL_INFO);
	ck_assert_int_eq(parse(&o, err, "-k", "bz", "--quiet", NULL), 0);
	ck_assert_int_eq(o.log_level, LOG_LEVEL_WARN);
	ck_assert_int_eq(parse(&o, err, "-k", "bz", "-v", NULL), 0);
	ck_assert_int_eq(o.log_level, LOG_LEVEL_DEBUG);
}
END_TEST

START_TEST(test_help_version)
{
	struct vm_options o;
	char err[256];

	ck_assert_int_eq(parse(&o, err, "--help", NULL), 0);
	ck_assert(o.help);
	ck_assert_int_eq(parse(&o, err, "--version", NULL), 0);
	ck_assert(o.version);
}
END_TEST

/* --churn[=KIB[,HZ]]: defaults 64 KiB, 1000 cycles a second */
START_TEST(test_churn)
{
	struct vm_options o;
	char err[256];

	ck_assert_int_eq(parse(&o, err, "--kernel", "bz", NULL), 0);
	ck_assert_uint_eq(o.vm.churn_kib, 0);
	ck_assert_int_eq(parse(&o, err, "--kernel", "bz", "--churn", NULL), 0);
	ck_assert_uint_eq(o.vm.churn_kib, 64);
	ck_assert_uint_eq(o.vm.churn_hz, 1000);
	ck_assert_int_eq(parse(&o, err, "--kernel", "bz", "--churn=128",
			       NULL), 0);
	ck_assert_uint_eq(o.vm.churn_kib, 128);
	ck_assert_uint_eq(o.vm.churn_hz, 1000);
	ck_assert_int_eq(parse(&o, err, "--kernel", "bz", "--churn=4,250",
			       NULL), 0);
	ck_assert_uint_eq(o.vm.churn_kib, 4);
	ck_assert_uint_eq(o.vm.churn_hz, 250);
	ck_assert_int_eq(parse(&o, err, "--kernel", "bz", "--churn=64,0",
			       NULL), 0);
	ck_assert_uint_eq(o.vm.churn_hz, 0);
}
END_TEST

static const struct {
	const char *sz;
	uint64_t bytes;
} good_sizes[] = {
	{ "300", 300ULL << 20 },
	{ "512M", 512ULL << 20 },
	{ "512m", 512ULL << 20 },
	{ "512MiB", 512ULL << 20 },
	{ "512MB", 512ULL << 20 },
	{ "2G", 2ULL << 30 },
	{ "65536K", 64ULL << 20 },
};

START_TEST(test_good_sizes)
{
	uint64_t b = 0;

	ck_assert_int_eq(options__parse_size(good_sizes[_i].sz, &b), 0);
	ck_assert_uint_eq(b, good_sizes[_i].bytes);
}
END_TEST

/* Each bad command line and a word its one-line error must contain. */
static const struct {
	const char *args[6];
	const char *msg;
} bad_args[] = {
	{ { NULL }, "--kernel is required" },
	{ { "--kernel", "bz", "--cpus", "0" }, "--cpus" },
	{ { "--kernel", "bz", "--cpus", "65" }, "--cpus" },
	{ { "--kernel", "bz", "--cpus", "-1" }, "--cpus" },
	{ { "--kernel", "bz", "--cpus", "two" }, "--cpus" },
	{ { "--kernel", "bz", "--cpus", "2x" }, "--cpus" },
	{ { "--kernel", "bz", "--mem", "63M" }, "between" },
	{ { "--kernel", "bz", "--mem", "65G" }, "between" },
	{ { "--kernel", "bz", "--mem", "0" }, "between" },
	{ { "--kernel", "bz", "--mem", "-5G" }, "--mem" },
	{ { "--kernel", "bz", "--mem", "12X" }, "--mem" },
	{ { "--kernel", "bz", "--mem", "99999999999999999999" }, "--mem" },
	{ { "--kernel", "bz", "--mem", "17179869184G" }, "--mem" },
	{ { "--kernel", "bz", "--bogus" }, "unknown option" },
	{ { "--kernel", "bz", "extra" }, "unexpected argument" },
	{ { "--kernel" }, "needs a value" },
	{ { "--kernel", "bz", "--churn=3" }, "--churn" },
	{ { "--kernel", "bz", "--churn=64," }, "--churn" },
	{ { "--kernel", "bz", "--churn=64,x" }, "--churn" },
	{ { "--kernel", "bz", "--churn=,5" }, "--churn" },
	{ { "--kernel", "bz", "--churn=64,1000001" }, "--churn" },
	{ { "--kernel", "bz", "--churn=64,5,6" }, "--churn" },
};

START_TEST(test_bad_args)
{
	char *argv[MAX_ARGS] = { "gpin-vmm" };
	struct vm_options o;
	char err[256] = "";
	int argc = 1, i;

	for (i = 0; i < 6 && bad_args[_i].args[i]; i++)
		argv[argc++] = (char *)bad_args[_i].args[i];
	ck_assert_int_eq(options__parse(&o, argc, argv, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, bad_args[_i].msg), "error '%s' lacks '%s'",
		      err, bad_args[_i].msg);
	ck_assert_ptr_null(strchr(err, '\n'));
}
END_TEST

START_TEST(test_cmdline_too_long)
{
	static char longline[CMDLINE_MAX + 1];
	struct vm_options o;
	char err[256];

	memset(longline, 'a', CMDLINE_MAX);
	ck_assert_int_eq(parse(&o, err, "--kernel", "bz", "--params",
			       longline, NULL), -1);
	ck_assert_ptr_nonnull(strstr(err, "--params"));
}
END_TEST

static Suite *options_suite(void)
{
	Suite *s = suite_create("options");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_all_options);
	tcase_add_test(tc, test_kvmtool_letters);
	tcase_add_test(tc, test_log_level);
	tcase_add_test(tc, test_test_exit_port);
	tcase_add_test(tc, test_help_version);
	tcase_add_test(tc, test_churn);
	tcase_add_loop_test(tc, test_good_sizes, 0,
			    sizeof(good_sizes) / sizeof(good_sizes[0]));
	tcase_add_loop_test(tc, test_bad_args, 0,
			    sizeof(bad_args) / sizeof(bad_args[0]));
	tcase_add_test(tc, test_cmdline_too_long);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(options_suite());
}
