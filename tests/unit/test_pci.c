// SPDX-License-Identifier: GPL-2.0-only
/*
 * PCI configuration space (pci/pci.c) and mechanism #1 (pci/host.c), as
 * a guest drives them through ports 0xcf8-0xcff: address decoding, the
 * accesses that must reach nothing, BAR sizing and refused moves, the
 * capability chain, read-only fields.
 */
#include <errno.h>
#include <stdint.h>

#include "pci/host.h"
#include "pci/pci.h"
#include "unit.h"

#define BAR_ADDR	0xe0000000u
#define BAR_SIZE	0x8000u

static struct pci_host *host;
static struct pci_func fn;

static void setup(void)
{
	host = pci_host__create();
	ck_assert_ptr_nonnull(host);
	pci_func__init(&fn, 0x1af4, 0x1042, 0x018000, 1);
	ck_assert_int_eq(pci_func__set_bar(&fn, 0, BAR_ADDR, BAR_SIZE), 0);
	ck_assert_int_eq(pci_host__add(host, &fn), 1);
}

static void teardown(void)
{
	pci_host__destroy(host);
}

static uint32_t io_in(unsigned int port, unsigned int len)
{
	uint32_t v = 0;

	pci_host__conf1_ops.read(host, port - 0xcf8, &v, len);
	return v;
}

static void io_out(unsigned int port, unsigned int len, uint32_t v)
{
	pci_host__conf1_ops.write(host, port - 0xcf8, &v, len);
}

static uint32_t addr(unsigned int bus, unsigned int dev, unsigned int fn_,
		     unsigned int reg)
{
	return PCI_CONF1_ENABLE | bus << 16 | dev << 11 | fn_ << 8 | reg;
}

/* A config read of @len bytes at @reg of 00:dev.0, as Linux does it. */
static uint32_t cfg_rd(unsigned int dev, unsigned int reg, unsigned int len)
{
	io_out(0xcf8, 4, addr(0, dev, 0, reg & ~3u));
	return io_in(0xcfc + (reg & 3), len);
}

static void cfg_wr(unsigned int dev, unsigned int reg, unsigned int len,
		   uint32_t v)
{
	io_out(0xcf8, 4, addr(0, dev, 0, reg & ~3u));
	io_out(0xcfc + (reg & 3), len, v);
}

/* Linux's pci_check_type1() and pci_sanity_check(). */
START_TEST(test_conf1_probe)
{
	io_out(0xcfb, 1, 0x01);		/* not the address register */
	io_out(0xcf8, 4, 0x80000000);
	ck_assert_uint_eq(io_in(0xcf8, 4), 0x80000000);
	ck_assert_uint_eq(cfg_rd(0, PCI_CLASS_DEVICE, 2), 0x0600);
	ck_assert_uint_eq(cfg_rd(0, PCI_HEADER_TYPE, 1), 0);
	/* Reserved and type bits do not stick. */
	io_out(0xcf8, 4, 0xffffffff);
	ck_assert_uint_eq(io_in(0xcf8, 4), 0x8ffffffc);
}
END_TEST

START_TEST(test_conf1_widths)
{
	ck_assert_uint_eq(cfg_rd(1, PCI_VENDOR_ID, 4), 0x10421af4);
	ck_assert_uint_eq(cfg_rd(1, PCI_VENDOR_ID, 2), 0x1af4);
	ck_assert_uint_eq(cfg_rd(1, PCI_DEVICE_ID, 2), 0x1042);
	ck_assert_uint_eq(cfg_rd(1, PCI_DEVICE_ID + 1, 1), 0x10);
	ck_assert_uint_eq(cfg_rd(1, PCI_REVISION_ID, 1), 1);
	ck_assert_uint_eq(cfg_rd(1, PCI_CLASS_REVISION, 4), 0x01800001);
}
END_TEST

/* Accesses nothing answers: all ones, and writes change nothing. */
static const struct {
	const char *what;
	uint32_t addr;
	unsigned int port, len;
} nothing[] = {
	/* Each at the command register, which a stray write would change. */
	{ "absent device", PCI_CONF1_ENABLE | 5 << 11 | 4, 0xcfc, 4 },
	{ "last device", PCI_CONF1_ENABLE | 31 << 11 | 4, 0xcfc, 4 },
	{ "bus 1", PCI_CONF1_ENABLE | 1 << 16 | 1 << 11 | 4, 0xcfc, 4 },
	{ "function 1", PCI_CONF1_ENABLE | 1 << 11 | 1 << 8 | 4, 0xcfc, 4 },
	{ "enable bit clear", 1 << 11 | 4, 0xcfc, 4 },
	{ "extended register", PCI_CONF1_ENABLE | 0x01000000 | 1 << 11 | 4,
	  0xcfc, 4 },
	{ "word straddling the dword", PCI_CONF1_ENABLE | 1 << 11 | 4,
	  0xcff, 2 },
	{ "dword not at 0xcfc", PCI_CONF1_ENABLE | 1 << 11 | 4, 0xcfe, 4 },
};

START_TEST(test_conf1_nothing)
{
	uint32_t ones = nothing[_i].len == 4 ? 0xffffffff : 0xffff;

	io_out(0xcf8, 4, nothing[_i].addr);
	ck_assert_msg(io_in(nothing[_i].port, nothing[_i].len) == ones,
		      "%s answered", nothing[_i].what);
	io_out(nothing[_i].port, nothing[_i].len, 0xffffffff);
	ck_assert_uint_eq(cfg_rd(1, PCI_VENDOR_ID, 4), 0x10421af4);
	ck_assert_uint_eq(cfg_rd(1, PCI_COMMAND, 2), 0);
}
END_TEST

/* Byte and word accesses to the address port are not the address. */
START_TEST(test_conf1_address_width)
{
	io_out(0xcf8, 4, addr(0, 1, 0, 0));
	io_out(0xcf8, 2, 0);
	io_out(0xcf9, 1, 0);
	ck_assert_uint_eq(io_in(0xcf8, 4), addr(0, 1, 0, 0));
	ck_assert_uint_eq(io_in(0xcf8, 2), 0xffff);
}
END_TEST

START_TEST(test_bar_sizing)
{
	ck_assert_uint_eq(cfg_rd(1, PCI_BASE_ADDRESS_0, 4), BAR_ADDR);
	/* Linux's __pci_read_base(): all ones, read the mask, restore. */
	cfg_wr(1, PCI_BASE_ADDRESS_0, 4, 0xffffffff);
	ck_assert_uint_eq(cfg_rd(1, PCI_BASE_ADDRESS_0, 4), ~(BAR_SIZE - 1));
	cfg_wr(1, PCI_BASE_ADDRESS_0, 4, BAR_ADDR);
	ck_assert_uint_eq(cfg_rd(1, PCI_BASE_ADDRESS_0, 4), BAR_ADDR);
	/* Unimplemented BARs size as 0. */
	cfg_wr(1, PCI_BASE_ADDRESS_1, 4, 0xffffffff);
	ck_assert_uint_eq(cfg_rd(1, PCI_BASE_ADDRESS_1, 4), 0);
}
END_TEST

START_TEST(test_bar_move_refused)
{
	cfg_wr(1, PCI_BASE_ADDRESS_0, 4, 0xd0000000);
	ck_assert_uint_eq(cfg_rd(1, PCI_BASE_ADDRESS_0, 4), BAR_ADDR);
	/* A byte write leaves neither the mask nor the address: refused. */
	cfg_wr(1, PCI_BASE_ADDRESS_0 + 3, 1, 0x12);
	ck_assert_uint_eq(cfg_rd(1, PCI_BASE_ADDRESS_0, 4), BAR_ADDR);
	/* Type bits are read-only. */
	cfg_wr(1, PCI_BASE_ADDRESS_0, 4, BAR_ADDR | 0xf);
	ck_assert_uint_eq(cfg_rd(1, PCI_BASE_ADDRESS_0, 4), BAR_ADDR);
}
END_TEST

/* The BAR decodes only with memory space on and at its own address. */
START_TEST(test_bar_decode)
{
	ck_assert(!pci_func__bar_decodes(&fn, 0));
	cfg_wr(1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	ck_assert(pci_func__bar_decodes(&fn, 0));
	ck_assert(!pci_func__bar_decodes(&fn, 1));
	ck_assert(!pci_func__bar_decodes(&fn, PCI_NUM_BARS));
	cfg_wr(1, PCI_BASE_ADDRESS_0, 4, 0xffffffff);
	ck_assert(!pci_func__bar_decodes(&fn, 0));
	cfg_wr(1, PCI_BASE_ADDRESS_0, 4, BAR_ADDR);
	ck_assert(pci_func__bar_decodes(&fn, 0));
	cfg_wr(1, PCI_COMMAND, 2, 0);
	ck_assert(!pci_func__bar_decodes(&fn, 0));
}
END_TEST

START_TEST(test_read_only_fields)
{
	cfg_wr(1, PCI_VENDOR_ID, 4, 0);
	ck_assert_uint_eq(cfg_rd(1, PCI_VENDOR_ID, 4), 0x10421af4);
	cfg_wr(1, PCI_CLASS_REVISION, 4, 0);
	ck_assert_uint_eq(cfg_rd(1, PCI_CLASS_REVISION, 4), 0x01800001);
	/* No I/O space, no SERR and such: only what we implement sticks. */
	cfg_wr(1, PCI_COMMAND, 2, 0xffff);
	ck_assert_uint_eq(cfg_rd(1, PCI_COMMAND, 2),
			  PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER |
			  PCI_COMMAND_INTX_DISABLE);
	cfg_wr(1, PCI_INTERRUPT_LINE, 1, 0x0b);
	ck_assert_uint_eq(cfg_rd(1, PCI_INTERRUPT_LINE, 1), 0x0b);
	cfg_wr(1, PCI_INTERRUPT_PIN, 1, 1);
	ck_assert_uint_eq(cfg_rd(1, PCI_INTERRUPT_PIN, 1), 0);
	cfg_wr(1, PCI_CAPABILITY_LIST, 1, 0x80);
	ck_assert_uint_eq(cfg_rd(1, PCI_CAPABILITY_LIST, 1), 0);
}
END_TEST

/* The walk Linux's pci_find_capability() makes, through the ports. */
START_TEST(test_cap_chain)
{
	static const uint8_t a[] = { PCI_CAP_ID_VNDR, 0xee, 16, 1 };
	static const uint8_t b[] = { PCI_CAP_ID_MSIX, 0xee, 0, 0, 0, 0, 0, 0,
				     0, 0, 0, 0 };
	static const uint8_t c[] = { PCI_CAP_ID_VNDR, 0xee, 3 };
	unsigned int want[] = { 0x40, 0x44, 0x50 }, ids[] = { 0x09, 0x11, 0x09 };
	unsigned int off, n = 0, mask = 0xff;

	ck_assert_uint_eq(cfg_rd(1, PCI_STATUS, 2) & PCI_STATUS_CAP_LIST, 0);
	ck_assert_uint_eq(pci_func__add_cap(&fn, a, sizeof(a)), 0x40);
	ck_assert_uint_eq(pci_func__add_cap(&fn, b, sizeof(b)), 0x44);
	ck_assert_uint_eq(pci_func__add_cap(&fn, c, sizeof(c)), 0x50);
	ck_assert(cfg_rd(1, PCI_STATUS, 2) & PCI_STATUS_CAP_LIST);
	for (off = cfg_rd(1, PCI_CAPABILITY_LIST, 1); off;
	     off = cfg_rd(1, off + PCI_CAP_LIST_NEXT, 1)) {
		ck_assert_uint_lt(n, 3);
		ck_assert_uint_eq(off, want[n]);
		ck_assert_uint_eq(cfg_rd(1, off, 1), ids[n]);
		n++;
	}
	ck_assert_uint_eq(n, 3);
	/* Read-only unless opened, and then only the bits opened. */
	cfg_wr(1, 0x42, 1, 0x55);
	ck_assert_uint_eq(cfg_rd(1, 0x42, 1), 16);
	pci_func__set_wmask(&fn, 0x42, &mask, 1);
	cfg_wr(1, 0x42, 1, 0x55);
	ck_assert_uint_eq(cfg_rd(1, 0x42, 1), 0x55);
}
END_TEST

START_TEST(test_cap_full)
{
	static uint8_t big[PCI_CFG_SIZE];

	big[0] = PCI_CAP_ID_VNDR;
	ck_assert_uint_eq(pci_func__add_cap(&fn, big, PCI_CFG_SIZE - 0x40), 0x40);
	ck_assert_uint_eq(pci_func__add_cap(&fn, big, 4), 0);
	ck_assert_uint_eq(pci_func__add_cap(&fn, big, 1), 0);
}
END_TEST

static const struct {
	uint32_t addr, size;
} bad_bars[] = {
	{ 0xe0000000, 0 }, { 0xe0000000, 8 }, { 0xe0000000, 0x3000 },
	{ 0xe0004000, 0x8000 }, { 0, 0x8000 },
};

START_TEST(test_bad_bar)
{
	ck_assert_int_eq(pci_func__set_bar(&fn, 1, bad_bars[_i].addr,
					   bad_bars[_i].size), -EINVAL);
	ck_assert_int_eq(pci_func__set_bar(&fn, PCI_NUM_BARS, BAR_ADDR,
					   BAR_SIZE), -EINVAL);
}
END_TEST

START_TEST(test_slots)
{
	static struct pci_func more[PCI_HOST_SLOTS];
	unsigned int i;

	/* The bridge has 0, fn has 1. */
	for (i = 2; i < PCI_HOST_SLOTS; i++)
		ck_assert_int_eq(pci_host__add(host, &more[i]), i);
	ck_assert_int_eq(pci_host__add(host, &more[0]), -ENOSPC);
}
END_TEST

static Suite *pci_suite(void)
{
	Suite *s = suite_create("pci");
	TCase *tc = tcase_create("conf1");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_conf1_probe);
	tcase_add_test(tc, test_conf1_widths);
	tcase_add_loop_test(tc, test_conf1_nothing, 0,
			    sizeof(nothing) / sizeof(nothing[0]));
	tcase_add_test(tc, test_conf1_address_width);
	tcase_add_test(tc, test_slots);
	suite_add_tcase(s, tc);

	tc = tcase_create("config space");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_bar_sizing);
	tcase_add_test(tc, test_bar_move_refused);
	tcase_add_test(tc, test_bar_decode);
	tcase_add_test(tc, test_read_only_fields);
	tcase_add_test(tc, test_cap_chain);
	tcase_add_test(tc, test_cap_full);
	tcase_add_loop_test(tc, test_bad_bar, 0,
			    sizeof(bad_bars) / sizeof(bad_bars[0]));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(pci_suite());
}
