// SPDX-License-Identifier: GPL-2.0-only
/* The bus and the small legacy devices: i8042 reset, exit port, RTC. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "arch/x86/layout.h"
#include "bus.h"
#include "devices/exit_port.h"
#include "devices/i8042.h"
#include "devices/rtc.h"
#include "unit.h"

static struct bus pio;
static int resets;
static int exit_code;

static void on_reset(void *opaque)
{
	resets++;
}

static void on_exit_code(void *opaque, uint8_t code)
{
	exit_code = code;
}

static void setup(void)
{
	bus__init(&pio, "pio");
	resets = 0;
	exit_code = -1;
}

static void out8(uint16_t port, uint8_t v)
{
	bus__access(&pio, port, &v, 1, true);
}

static uint8_t in8(uint16_t port)
{
	uint8_t v;

	bus__access(&pio, port, &v, 1, false);
	return v;
}

START_TEST(test_bus_overlap_and_unclaimed)
{
	static const struct bus_dev_ops none;
	uint32_t v = 0;

	ck_assert_int_eq(bus__register(&pio, 0x100, 8, &none, NULL), 0);
	ck_assert_int_eq(bus__register(&pio, 0x107, 2, &none, NULL), -EEXIST);
	ck_assert_int_eq(bus__register(&pio, 0xf8, 9, &none, NULL), -EEXIST);
	ck_assert_int_eq(bus__register(&pio, 0x108, 1, &none, NULL), 0);
	ck_assert_int_eq(bus__register(&pio, 0, 0, &none, NULL), -EINVAL);
	ck_assert_int_eq(bus__register(&pio, UINT64_MAX, 2, &none, NULL), -EINVAL);
	/* Nothing behind the address: reads float high, writes vanish. */
	ck_assert(!bus__access(&pio, 0x200, &v, 4, false));
	ck_assert_uint_eq(v, 0xffffffff);
	/* An access straddling a device's end is not the device's. */
	ck_assert(!bus__access(&pio, 0x107, &v, 4, false));
	/* A device without callbacks reads as all ones. */
	ck_assert(bus__access(&pio, 0x100, &v, 2, false));
	ck_assert_uint_eq(v & 0xffff, 0xffff);
}
END_TEST

START_TEST(test_bus_full)
{
	static const struct bus_dev_ops none;
	unsigned int i;

	for (i = 0; i < BUS_MAX_DEVS; i++)
		ck_assert_int_eq(bus__register(&pio, i * 2, 1, &none, NULL), 0);
	ck_assert_int_eq(bus__register(&pio, 0x1000, 1, &none, NULL), -ENOSPC);
}
END_TEST

START_TEST(test_i8042_reset)
{
	struct i8042 kbd = { .reset = on_reset };

	ck_assert_int_eq(i8042__attach(&kbd, &pio), 0);
	ck_assert_uint_eq(in8(PORT_I8042_CMD), 0);	/* ready, nothing queued */
	out8(PORT_I8042_CMD, 0xaa);
	out8(PORT_I8042_DATA, 0xfe);
	ck_assert_int_eq(resets, 0);
	out8(PORT_I8042_CMD, 0xfe);
	ck_assert_int_eq(resets, 1);
}
END_TEST

START_TEST(test_exit_port)
{
	struct exit_port ep = { .exit = on_exit_code };
	uint32_t wide = 0x12345607;

	ck_assert_int_eq(exit_port__attach(&ep, &pio), 0);
	out8(PORT_EXIT, 42);
	ck_assert_int_eq(exit_code, 42);
	bus__access(&pio, PORT_EXIT, &wide, 1, true);
	ck_assert_int_eq(exit_code, 7);
}
END_TEST

START_TEST(test_rtc_registers)
{
	/* 2026-12-03 05:24:56 UTC, a Thursday. */
	int64_t t = 1796275496;

	ck_assert_uint_eq(rtc__reg(0x00, t), 0x56);
	ck_assert_uint_eq(rtc__reg(0x02, t), 0x24);
	ck_assert_uint_eq(rtc__reg(0x04, t), 0x05);
	ck_assert_uint_eq(rtc__reg(0x07, t), 0x03);
	ck_assert_uint_eq(rtc__reg(0x08, t), 0x12);
	ck_assert_uint_eq(rtc__reg(0x09, t), 0x26);
	ck_assert_uint_eq(rtc__reg(0x32, t), 0x20);
	ck_assert_uint_eq(rtc__reg(0x0a, t) & 0x80, 0);	/* never updating */
	ck_assert_uint_eq(rtc__reg(0x0d, t), 0x80);
}
END_TEST

START_TEST(test_rtc_ports)
{
	struct rtc rtc;
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	ck_assert_int_eq(rtc__attach(&rtc, &pio), 0);
	out8(0x70, 0x80 | 0x09);	/* NMI-mask bit must not matter */
	ck_assert_uint_eq(in8(0x71), ((tm.tm_year % 100) / 10) << 4 |
				     (tm.tm_year % 10));
	ck_assert_uint_eq(in8(0x70), 0xff);
}
END_TEST

static Suite *devices_suite(void)
{
	Suite *s = suite_create("devices");
	TCase *tc = tcase_create("legacy");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_bus_overlap_and_unclaimed);
	tcase_add_test(tc, test_bus_full);
	tcase_add_test(tc, test_i8042_reset);
	tcase_add_test(tc, test_exit_port);
	tcase_add_test(tc, test_rtc_registers);
	tcase_add_test(tc, test_rtc_ports);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(devices_suite());
}
