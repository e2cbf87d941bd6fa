// SPDX-License-Identifier: GPL-2.0-only
/*
 * ACPI PM1a registers and pvpanic, driven through their ops tables and
 * through a port bus, the way vCPU exits reach them.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "arch/x86/layout.h"
#include "bus.h"
#include "devices/acpi_pm.h"
#include "devices/pvpanic.h"

#define S5_WRITE	(ACPI_PM1_CNT_SLP_EN | \
			 ACPI_S5_SLP_TYP << ACPI_PM1_CNT_SLP_TYP_SHIFT)

static int poweroffs;
static int panics;
static struct acpi_pm *pm;
static struct pvpanic *pv;

static void count_poweroff(void *opaque)
{
	ck_assert_ptr_eq(opaque, &poweroffs);
	poweroffs++;
}

static void count_panic(void *opaque)
{
	ck_assert_ptr_eq(opaque, &panics);
	panics++;
}

static void setup(void)
{
	poweroffs = 0;
	panics = 0;
	pm = acpi_pm__create(count_poweroff, &poweroffs);
	ck_assert_ptr_nonnull(pm);
	pv = pvpanic__create(count_panic, &panics);
	ck_assert_ptr_nonnull(pv);
}

static void teardown(void)
{
	acpi_pm__destroy(pm);
	pvpanic__destroy(pv);
}

static void cnt_write16(uint16_t v)
{
	acpi_pm__cnt_ops.write(pm, 0, &v, sizeof(v));
}

static uint16_t cnt_read16(void)
{
	uint16_t v = 0;

	acpi_pm__cnt_ops.read(pm, 0, &v, sizeof(v));
	return v;
}

static uint16_t evt_read16(uint64_t off)
{
	uint16_t v = 0;

	acpi_pm__evt_ops.read(pm, off, &v, sizeof(v));
	return v;
}

static void evt_write16(uint64_t off, uint16_t v)
{
	acpi_pm__evt_ops.write(pm, off, &v, sizeof(v));
}

START_TEST(test_s5_powers_off_once)
{
	/* Linux's sequence: SLP_TYP alone, then SLP_TYP | SLP_EN. */
	cnt_write16(ACPI_S5_SLP_TYP << ACPI_PM1_CNT_SLP_TYP_SHIFT);
	ck_assert_int_eq(poweroffs, 0);
	cnt_write16(S5_WRITE);
	ck_assert_int_eq(poweroffs, 1);
	/* S5 is one-way: a second request does not stop the VM again. */
	cnt_write16(S5_WRITE);
	ck_assert_int_eq(poweroffs, 1);
}
END_TEST

/* Every SLP_TYP but S5, with SLP_EN set, is ignored. */
START_TEST(test_other_sleep_types_ignored)
{
	unsigned int typ = _i;

	if (typ == ACPI_S5_SLP_TYP)
		return;
	cnt_write16(ACPI_PM1_CNT_SLP_EN | typ << ACPI_PM1_CNT_SLP_TYP_SHIFT);
	ck_assert_int_eq(poweroffs, 0);
}
END_TEST

START_TEST(test_s5_without_slp_en_ignored)
{
	cnt_write16(ACPI_S5_SLP_TYP << ACPI_PM1_CNT_SLP_TYP_SHIFT |
		    ACPI_PM1_CNT_SCI_EN);
	ck_assert_int_eq(poweroffs, 0);
}
END_TEST

/* A byte write to the high half sets SLP_EN just as well. */
START_TEST(test_s5_byte_write)
{
	uint8_t hi = S5_WRITE >> 8;

	acpi_pm__cnt_ops.write(pm, 1, &hi, 1);
	ck_assert_int_eq(poweroffs, 1);
}
END_TEST

START_TEST(test_cnt_reads_sci_en)
{
	ck_assert_uint_eq(cnt_read16() & ACPI_PM1_CNT_SCI_EN, ACPI_PM1_CNT_SCI_EN);
	/* Clearing SCI_EN does not leave ACPI mode. */
	cnt_write16(0);
	ck_assert_uint_eq(cnt_read16(), ACPI_PM1_CNT_SCI_EN);
	/* SLP_TYP reads back; SLP_EN and GBL_RLS are write-only. */
	cnt_write16(3 << ACPI_PM1_CNT_SLP_TYP_SHIFT | ACPI_PM1_CNT_GBL_RLS);
	ck_assert_uint_eq(cnt_read16(),
			  3 << ACPI_PM1_CNT_SLP_TYP_SHIFT | ACPI_PM1_CNT_SCI_EN);
	cnt_write16(ACPI_PM1_CNT_SLP_EN | 3 << ACPI_PM1_CNT_SLP_TYP_SHIFT);
	ck_assert_uint_eq(cnt_read16() & ACPI_PM1_CNT_SLP_EN, 0);
}
END_TEST

START_TEST(test_evt_status_and_enable)
{
	uint32_t both = 0;

	ck_assert_uint_eq(evt_read16(ACPI_PM1_STS), 0);
	ck_assert_uint_eq(evt_read16(ACPI_PM1_EN), 0);
	/*
	 * The enable bits stick: ACPICA writes GBL_EN and reads it back to
	 * decide whether the global lock hardware exists.
	 */
	evt_write16(ACPI_PM1_EN, 0x0120);
	ck_assert_uint_eq(evt_read16(ACPI_PM1_EN), 0x0120);
	/* Status is write-1-to-clear and nothing ever sets it. */
	evt_write16(ACPI_PM1_STS, 0xffff);
	ck_assert_uint_eq(evt_read16(ACPI_PM1_STS), 0);
	/* One 32-bit read sees status in the low half, enable in the high. */
	acpi_pm__evt_ops.read(pm, 0, &both, sizeof(both));
	ck_assert_uint_eq(both, 0x0120u << 16);
	/* A byte write changes only its byte. */
	{
		uint8_t b = 0x01;

		acpi_pm__evt_ops.write(pm, ACPI_PM1_EN + 1, &b, 1);
	}
	ck_assert_uint_eq(evt_read16(ACPI_PM1_EN), 0x0120);
	ck_assert_int_eq(poweroffs, 0);
}
END_TEST

static const struct {
	uint64_t offset;
	unsigned int len;
} bad_cnt[] = {
	{ 2, 1 }, { 1, 2 }, { 0, 4 }, { 0, 8 }, { 0, 0 }, { 0, 16 },
	{ UINT64_MAX, 2 }, { UINT64_MAX - 1, 4 }, { 0x1000, 2 },
};

/* Out-of-range accesses do nothing and never power off. */
START_TEST(test_cnt_bad_access)
{
	uint8_t buf[16];
	size_t i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(S5_WRITE >> (i % 2 * 8));
	acpi_pm__cnt_ops.write(pm, bad_cnt[_i].offset, buf, bad_cnt[_i].len);
	acpi_pm__cnt_ops.read(pm, bad_cnt[_i].offset, buf, bad_cnt[_i].len);
	ck_assert_int_eq(poweroffs, 0);
	ck_assert_uint_eq(cnt_read16(), ACPI_PM1_CNT_SCI_EN);
}
END_TEST

START_TEST(test_evt_bad_access)
{
	uint8_t buf[16] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	acpi_pm__evt_ops.write(pm, 3, buf, 2);
	acpi_pm__evt_ops.write(pm, 0, buf, 8);
	acpi_pm__evt_ops.write(pm, UINT64_MAX, buf, 4);
	acpi_pm__evt_ops.read(pm, 4, buf, 1);
	ck_assert_uint_eq(buf[0], 0xff);
	acpi_pm__evt_ops.read(pm, 2, buf, 4);
	ck_assert_uint_eq(evt_read16(ACPI_PM1_EN), 0);
}
END_TEST

/* Through a real bus at the FADT's ports, as a vCPU exit gets there. */
START_TEST(test_attach_ports)
{
	struct bus pio;
	uint16_t v = S5_WRITE;

	bus__init(&pio, "pio");
	ck_assert_int_eq(acpi_pm__attach(pm, &pio), 0);
	ck_assert_int_eq(pvpanic__attach(pv, &pio), 0);
	/* Attaching twice is a clash, not a silent second device. */
	ck_assert_int_eq(acpi_pm__attach(pm, &pio), -EEXIST);

	ck_assert(bus__access(&pio, PORT_ACPI_PM1A_CNT, &v, 2, false));
	ck_assert_uint_eq(v & ACPI_PM1_CNT_SCI_EN, ACPI_PM1_CNT_SCI_EN);
	ck_assert(bus__access(&pio, PORT_ACPI_PM1A_EVT + ACPI_PM1_EN, &v, 2,
			      false));
	v = S5_WRITE;
	ck_assert(bus__access(&pio, PORT_ACPI_PM1A_CNT, &v, 2, true));
	ck_assert_int_eq(poweroffs, 1);
}
END_TEST

static void *hammer_cnt(void *arg)
{
	int i;

	for (i = 0; i < 10000; i++) {
		cnt_write16(3 << ACPI_PM1_CNT_SLP_TYP_SHIFT);
		evt_write16(ACPI_PM1_EN, (uint16_t)i);
		(void)cnt_read16();
	}
	cnt_write16(S5_WRITE);
	return arg;
}

/* Several vCPUs asking for S5 at once still power off exactly once. */
START_TEST(test_concurrent_s5)
{
	pthread_t t[4];
	unsigned int i;

	for (i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, hammer_cnt, NULL), 0);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_eq(poweroffs, 1);
}
END_TEST

START_TEST(test_pvpanic_read_caps)
{
	uint8_t v = 0;

	pvpanic__ops.read(pv, 0, &v, 1);
	ck_assert_uint_eq(v, PVPANIC_PANICKED | PVPANIC_CRASH_LOADED);
}
END_TEST

START_TEST(test_pvpanic_panicked)
{
	uint8_t v = PVPANIC_PANICKED;

	pvpanic__ops.write(pv, 0, &v, 1);
	ck_assert_int_eq(panics, 1);
}
END_TEST

/* CRASH_LOADED alone: a kdump kernel takes over, the VM keeps running. */
START_TEST(test_pvpanic_crash_loaded_ignored)
{
	uint8_t v = PVPANIC_CRASH_LOADED;

	pvpanic__ops.write(pv, 0, &v, 1);
	v = 0;
	pvpanic__ops.write(pv, 0, &v, 1);
	ck_assert_int_eq(panics, 0);
}
END_TEST

START_TEST(test_pvpanic_bad_access)
{
	uint8_t buf[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	pvpanic__ops.write(pv, 1, buf, 1);
	pvpanic__ops.write(pv, 0, buf, 0);
	pvpanic__ops.write(pv, 0, buf, 2);
	pvpanic__ops.write(pv, UINT64_MAX, buf, 1);
	pvpanic__ops.read(pv, 5, buf, 1);
	ck_assert_uint_eq(buf[0], 0xff);
	pvpanic__ops.read(pv, 0, buf, 0);
	ck_assert_int_eq(panics, 0);
}
END_TEST

/* Two devices of each kind keep their own state and callbacks. */
START_TEST(test_two_instances)
{
	int other = 0;
	struct acpi_pm *pm2 = acpi_pm__create(NULL, &other);
	uint16_t v = S5_WRITE;

	ck_assert_ptr_nonnull(pm2);
	evt_write16(ACPI_PM1_EN, 0x20);
	ck_assert_uint_eq(evt_read16(ACPI_PM1_EN), 0x20);
	acpi_pm__evt_ops.read(pm2, ACPI_PM1_EN, &v, 2);
	ck_assert_uint_eq(v, 0);
	/* A NULL callback is allowed: S5 is then only latched. */
	v = S5_WRITE;
	acpi_pm__cnt_ops.write(pm2, 0, &v, 2);
	ck_assert_int_eq(poweroffs, 0);
	acpi_pm__destroy(pm2);
	acpi_pm__destroy(NULL);
}
END_TEST

static Suite *acpi_pm_suite(void)
{
	Suite *s = suite_create("acpi_pm");
	TCase *tc;

	tc = tcase_create("pm1_cnt");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_s5_powers_off_once);
	tcase_add_loop_test(tc, test_other_sleep_types_ignored, 0, 8);
	tcase_add_test(tc, test_s5_without_slp_en_ignored);
	tcase_add_test(tc, test_s5_byte_write);
	tcase_add_test(tc, test_cnt_reads_sci_en);
	tcase_add_loop_test(tc, test_cnt_bad_access, 0,
			    sizeof(bad_cnt) / sizeof(bad_cnt[0]));
	tcase_add_test(tc, test_concurrent_s5);
	suite_add_tcase(s, tc);

	tc = tcase_create("pm1_evt");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_evt_status_and_enable);
	tcase_add_test(tc, test_evt_bad_access);
	suite_add_tcase(s, tc);

	tc = tcase_create("wiring");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_attach_ports);
	tcase_add_test(tc, test_two_instances);
	suite_add_tcase(s, tc);

	tc = tcase_create("pvpanic");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_pvpanic_read_caps);
	tcase_add_test(tc, test_pvpanic_panicked);
	tcase_add_test(tc, test_pvpanic_crash_loaded_ignored);
	tcase_add_test(tc, test_pvpanic_bad_access);
	suite_add_tcase(s, tc);

	return s;
}

/* CK_ENV: see test_acpi.c. */
int main(void)
{
	SRunner *sr = srunner_create(acpi_pm_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
