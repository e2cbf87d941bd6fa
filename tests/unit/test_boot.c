// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>
#include <sys/mman.h>

#include <asm/e820.h>

#include "arch/x86/boot.h"
#include "arch/x86/layout.h"
#include "unit.h"

#define IMG_SETUP_SECTS	4
#define IMG_PM_SIZE	(64 * 1024)
#define IMG_SIZE	((IMG_SETUP_SECTS + 1) * 512 + IMG_PM_SIZE)
#define RAM_SIZE	(256ULL << 20)

static uint8_t *img;
static uint8_t *ram;

static struct setup_header *hdr(void)
{
	return (struct setup_header *)(img + 0x1f1);
}

/* A minimal, valid bzImage header in front of a recognisable payload. */
static void make_image(void)
{
	struct setup_header *h = hdr();
	size_t i;

	memset(img, 0, IMG_SIZE);
	h->setup_sects = IMG_SETUP_SECTS;
	h->boot_flag = 0xaa55;
	h->header = 0x53726448;
	h->version = 0x020f;
	h->loadflags = LOADED_HIGH;
	h->xloadflags = XLF_KERNEL_64;
	h->cmdline_size = 2047;
	h->initrd_addr_max = 0x7fffffff;
	h->relocatable_kernel = 1;
	h->kernel_alignment = 0x200000;
	h->pref_address = 0x1000000;
	h->init_size = 8 << 20;
	img[0x201] = 0x6a;	/* header length byte: up to 0x26c */
	for (i = 0; i < IMG_PM_SIZE; i++)
		img[(IMG_SETUP_SECTS + 1) * 512 + i] = (uint8_t)(i * 7);
}

static void setup(void)
{
	img = calloc(1, IMG_SIZE);
	ram = mmap(NULL, RAM_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ck_assert_ptr_ne(ram, MAP_FAILED);
	make_image();
}

static void teardown(void)
{
	free(img);
	munmap(ram, RAM_SIZE);
}

static struct boot_ram test_ram(uint64_t size)
{
	return (struct boot_ram) {
		.base = ram,
		.lowmem_size = size,
		.ram_size = size,
	};
}

static int load(uint64_t ramsize, const uint8_t *initrd, size_t isize,
		const char *cmdline, struct boot_info *info, char *err)
{
	struct boot_ram r = test_ram(ramsize);
	struct boot_files f = {
		.kernel = img, .kernel_size = IMG_SIZE,
		.initrd = initrd, .initrd_size = isize,
		.cmdline = cmdline, .acpi_rsdp = ACPI_RSDP_START,
	};

	return boot__load(&r, &f, info, err, 256);
}

START_TEST(test_load_places_kernel_at_pref_address)
{
	struct boot_params *bp = (void *)(ram + ZERO_PAGE_START);
	struct boot_info info;
	char err[256];

	ck_assert_int_eq(load(RAM_SIZE, NULL, 0, "console=ttyS0", &info, err), 0);
	ck_assert_uint_eq(info.kernel_addr, 0x1000000);
	ck_assert_uint_eq(info.entry, 0x1000000 + 0x200);
	ck_assert_mem_eq(ram + info.kernel_addr,
			 img + (IMG_SETUP_SECTS + 1) * 512, IMG_PM_SIZE);
	ck_assert_uint_eq(bp->hdr.boot_flag, 0xaa55);
	ck_assert_uint_eq(bp->hdr.type_of_loader, 0xff);
	ck_assert_uint_eq(bp->hdr.cmd_line_ptr, CMDLINE_START);
	ck_assert_str_eq((char *)ram + CMDLINE_START, "console=ttyS0");
	ck_assert_uint_eq(bp->hdr.ramdisk_image, 0);
	ck_assert_uint_eq(bp->acpi_rsdp_addr, ACPI_RSDP_START);
}
END_TEST

START_TEST(test_not_relocatable_loads_at_1m)
{
	struct boot_info info;
	char err[256];

	hdr()->relocatable_kernel = 0;
	ck_assert_int_eq(load(RAM_SIZE, NULL, 0, "", &info, err), 0);
	ck_assert_uint_eq(info.kernel_addr, KERNEL_START_DEFAULT);
}
END_TEST

START_TEST(test_initrd_high_and_page_aligned)
{
	static uint8_t rd[10000];
	struct boot_params *bp = (void *)(ram + ZERO_PAGE_START);
	struct boot_info info;
	char err[256];

	memset(rd, 0x5a, sizeof(rd));
	ck_assert_int_eq(load(RAM_SIZE, rd, sizeof(rd), "", &info, err), 0);
	ck_assert_uint_eq(info.initrd_addr % 4096, 0);
	ck_assert_uint_le(info.initrd_addr + sizeof(rd), RAM_SIZE);
	ck_assert_uint_gt(info.initrd_addr, RAM_SIZE - 16 * 4096);
	ck_assert_uint_eq(bp->hdr.ramdisk_image, info.initrd_addr);
	ck_assert_uint_eq(bp->hdr.ramdisk_size, sizeof(rd));
	ck_assert_mem_eq(ram + info.initrd_addr, rd, sizeof(rd));
}
END_TEST

START_TEST(test_initrd_respects_addr_max)
{
	static uint8_t rd[4096];
	struct boot_info info;
	char err[256];

	hdr()->initrd_addr_max = 0x3fffffff / 16;	/* ~64 MiB */
	ck_assert_int_eq(load(RAM_SIZE, rd, sizeof(rd), "", &info, err), 0);
	ck_assert_uint_le(info.initrd_addr + sizeof(rd),
			  (uint64_t)hdr()->initrd_addr_max + 1);
}
END_TEST

START_TEST(test_initrd_does_not_fit)
{
	size_t big = 250 << 20;
	uint8_t *rd = malloc(big);
	struct boot_info info;
	char err[256];

	ck_assert_int_eq(load(RAM_SIZE, rd, big, "", &info, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "initrd"));
	free(rd);
}
END_TEST

START_TEST(test_mem_too_small_for_kernel)
{
	struct boot_info info;
	char err[256];

	hdr()->init_size = 300 << 20;
	ck_assert_int_eq(load(RAM_SIZE, NULL, 0, "", &info, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "--mem"));
}
END_TEST

START_TEST(test_cmdline_longer_than_kernel_takes)
{
	char line[300];
	struct boot_info info;
	char err[256];

	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = 0;
	hdr()->cmdline_size = 255;
	ck_assert_int_eq(load(RAM_SIZE, NULL, 0, line, &info, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "command line"));
}
END_TEST

/* Image mutations the loader must refuse, with a word of the reason. */
static void no_magic(void) { hdr()->boot_flag = 0; }
static void no_hdrs(void) { hdr()->header = 0x12345678; }
static void old_protocol(void) { hdr()->version = 0x0206; }
static void no_64bit(void) { hdr()->xloadflags = 0; }
static void zimage(void) { hdr()->loadflags = 0; }
static void setup_only(void) { hdr()->setup_sects = 200; }

static const struct {
	void (*mutate)(void);
	const char *msg;
} bad_images[] = {
	{ no_magic, "not a bzImage" },
	{ no_hdrs, "not a bzImage" },
	{ old_protocol, "too old" },
	{ no_64bit, "64-bit" },
	{ zimage, "zImage" },
	{ setup_only, "truncated" },
};

START_TEST(test_bad_images)
{
	char err[256] = "";

	bad_images[_i].mutate();
	ck_assert_int_eq(boot__check_bzimage(img, IMG_SIZE, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, bad_images[_i].msg), "'%s' lacks '%s'", err,
		      bad_images[_i].msg);
}
END_TEST

START_TEST(test_tiny_file)
{
	char err[256];

	ck_assert_int_eq(boot__check_bzimage(img, 100, err, sizeof(err)), -1);
}
END_TEST

START_TEST(test_e820_small)
{
	struct boot_e820_entry t[8];
	struct boot_ram r = test_ram(RAM_SIZE);
	unsigned int n = boot__build_e820(t, 8, &r);

	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(t[0].addr, 0);
	ck_assert_uint_eq(t[0].size, EBDA_START);
	ck_assert_uint_eq(t[0].type, E820_RAM);
	ck_assert_uint_eq(t[1].type, E820_RESERVED);
	ck_assert_uint_eq(t[1].addr + t[1].size, 0x100000);
	ck_assert_uint_eq(t[2].addr, 0x100000);
	ck_assert_uint_eq(t[2].addr + t[2].size, RAM_SIZE);
	ck_assert_uint_eq(t[2].type, E820_RAM);
}
END_TEST

START_TEST(test_e820_above_hole)
{
	struct boot_e820_entry t[8];
	struct boot_ram r = {
		.lowmem_size = MMIO_HOLE_START,
		.ram_size = 8ULL << 30,
	};
	unsigned int n = boot__build_e820(t, 8, &r);

	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(t[2].addr + t[2].size, MMIO_HOLE_START);
	ck_assert_uint_eq(t[3].addr, SZ_4G);
	ck_assert_uint_eq(t[3].size, (8ULL << 30) - MMIO_HOLE_START);
	/* Entries in order, never overlapping, never touching the hole. */
	for (unsigned int i = 1; i < n; i++)
		ck_assert_uint_le(t[i - 1].addr + t[i - 1].size, t[i].addr);
}
END_TEST

START_TEST(test_zero_page_e820)
{
	struct boot_params *bp = (void *)(ram + ZERO_PAGE_START);
	struct boot_info info;
	char err[256];

	ck_assert_int_eq(load(RAM_SIZE, NULL, 0, "", &info, err), 0);
	ck_assert_uint_eq(bp->e820_entries, 3);
	ck_assert_uint_eq(bp->e820_table[2].addr + bp->e820_table[2].size,
			  RAM_SIZE);
}
END_TEST

START_TEST(test_page_tables_identity)
{
	uint64_t *pml4 = (uint64_t *)(ram + BOOT_PML4_START);
	uint64_t *pdpt, *pd;
	uint64_t va = 0xfee00000ULL;	/* the LAPIC must be reachable too */

	boot__setup_page_tables(ram);
	ck_assert(pml4[0] & 1);
	pdpt = (uint64_t *)(ram + (pml4[0] & ~0xfffULL));
	pd = (uint64_t *)(ram + (pdpt[va >> 30] & ~0xfffULL));
	ck_assert_uint_eq(pd[(va >> 21) & 511] & ~0xfffULL, va & ~(SZ_2M - 1));
	ck_assert(pd[(va >> 21) & 511] & 0x80);
	ck_assert_uint_eq(pml4[1], 0);
}
END_TEST

START_TEST(test_gdt_segments)
{
	uint64_t *gdt = (uint64_t *)(ram + BOOT_GDT_START);

	boot__setup_gdt(ram);
	ck_assert_uint_eq(gdt[0], 0);
	/* 64-bit code: L=1, D=0, P=1, S=1, type execute/read. */
	ck_assert(gdt[BOOT_CS / 8] & (1ULL << 53));
	ck_assert(!(gdt[BOOT_CS / 8] & (1ULL << 54)));
	ck_assert(gdt[BOOT_CS / 8] & (1ULL << 47));
	ck_assert_uint_eq((gdt[BOOT_DS / 8] >> 40) & 0xff, 0x93);
	ck_assert_uint_lt(BOOT_GDT_START + BOOT_GDT_ENTRIES * 8, BOOT_IDT_START + 1);
}
END_TEST

static Suite *boot_suite(void)
{
	Suite *s = suite_create("boot");
	TCase *load_tc = tcase_create("load");
	TCase *layout_tc = tcase_create("layout");

	tcase_add_checked_fixture(load_tc, setup, teardown);
	tcase_add_test(load_tc, test_load_places_kernel_at_pref_address);
	tcase_add_test(load_tc, test_not_relocatable_loads_at_1m);
	tcase_add_test(load_tc, test_initrd_high_and_page_aligned);
	tcase_add_test(load_tc, test_initrd_respects_addr_max);
	tcase_add_test(load_tc, test_initrd_does_not_fit);
	tcase_add_test(load_tc, test_mem_too_small_for_kernel);
	tcase_add_test(load_tc, test_cmdline_longer_than_kernel_takes);
	tcase_add_loop_test(load_tc, test_bad_images, 0,
			    sizeof(bad_images) / sizeof(bad_images[0]));
	tcase_add_test(load_tc, test_tiny_file);
	tcase_add_test(load_tc, test_zero_page_e820);
	suite_add_tcase(s, load_tc);

	tcase_add_checked_fixture(layout_tc, setup, teardown);
	tcase_add_test(layout_tc, test_e820_small);
	tcase_add_test(layout_tc, test_e820_above_hole);
	tcase_add_test(layout_tc, test_page_tables_identity);
	tcase_add_test(layout_tc, test_gdt_segments);
	suite_add_tcase(s, layout_tc);
	return s;
}

int main(void)
{
	return unit_run(boot_suite());
}
