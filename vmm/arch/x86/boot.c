// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <asm/e820.h>

#include "boot.h"
#include "layout.h"
#include "log.h"

#define SETUP_HEADER_OFFSET	0x1f1
#define BOOT_FLAG_MAGIC		0xaa55
#define HDRS_MAGIC		0x53726448	/* "HdrS" */
#define SETUP_SECTS_DEFAULT	4
#define SECTOR_SIZE		512
#define ENTRY64_OFFSET		0x200		/* startup_64 from startup_32 */
#define LOADER_TYPE_UNDEFINED	0xff

/* Page-table entry bits, as the CPU defines them. */
#define PTE_PRESENT		(1ULL << 0)
#define PTE_RW			(1ULL << 1)
#define PTE_PS			(1ULL << 7)

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static uint64_t align_down(uint64_t v, uint64_t a)
{
	return v & ~(a - 1);
}

/* The setup header as it sits in the image (packed, little-endian). */
static const struct setup_header *image_header(const uint8_t *img)
{
	return (const struct setup_header *)(img + SETUP_HEADER_OFFSET);
}

static unsigned int setup_sects(const struct setup_header *hdr)
{
	return hdr->setup_sects ? hdr->setup_sects : SETUP_SECTS_DEFAULT;
}

int boot__check_bzimage(const uint8_t *img, size_t size, char *err,
			size_t errlen)
{
	const struct setup_header *hdr;
	size_t pm_offset;

	if (size < sizeof(struct boot_params))
		return err__set(err, errlen, "too small to be a bzImage (%zu bytes)",
				size);
	hdr = image_header(img);
	if (hdr->boot_flag != BOOT_FLAG_MAGIC || hdr->header != HDRS_MAGIC)
		return err__set(err, errlen, "not a bzImage (no boot signature)");
	if (hdr->version < BOOT_PROTOCOL_MIN)
		return err__set(err, errlen,
				"boot protocol %u.%02u is too old (need %u.%02u)",
				hdr->version >> 8, hdr->version & 0xff,
				BOOT_PROTOCOL_MIN >> 8, BOOT_PROTOCOL_MIN & 0xff);
	if (!(hdr->loadflags & LOADED_HIGH))
		return err__set(err, errlen, "not a bzImage (zImage loads low)");
	if (!(hdr->xloadflags & XLF_KERNEL_64))
		return err__set(err, errlen, "kernel has no 64-bit entry point");
	pm_offset = (size_t)(setup_sects(hdr) + 1) * SECTOR_SIZE;
	if (pm_offset >= size)
		return err__set(err, errlen, "truncated bzImage (setup only)");
	return 0;
}

/*
 * Relocatable kernels say where they would like to run; honour it when
 * that leaves the rest of low RAM usable, else load at 1 MiB as every
 * bzImage allows.
 */
static uint64_t choose_kernel_addr(const struct setup_header *hdr,
				   uint64_t lowmem_size, uint64_t need)
{
	uint64_t pref = hdr->pref_address;

	if (hdr->relocatable_kernel && pref >= KERNEL_START_DEFAULT &&
	    pref + need <= lowmem_size && pref + need > pref)
		return pref;
	return KERNEL_START_DEFAULT;
}

/*
 * The initramfs goes as high as the kernel allows (initrd_addr_max) so it
 * never overlaps the decompressed kernel at the bottom.
 */
static int place_initrd(const struct boot_ram *ram,
			const struct setup_header *hdr,
			uint64_t kernel_end, size_t size, uint64_t *addr)
{
	uint64_t top = ram->lowmem_size;

	if (hdr->initrd_addr_max && (uint64_t)hdr->initrd_addr_max + 1 < top)
		top = (uint64_t)hdr->initrd_addr_max + 1;
	if (size > top)
		return -1;
	*addr = align_down(top - size, SZ_4K);
	return *addr >= kernel_end ? 0 : -1;
}

unsigned int boot__build_e820(struct boot_e820_entry *table, unsigned int max,
			      const struct boot_ram *ram)
{
	struct boot_e820_entry e[] = {
		{ 0, EBDA_START, E820_RAM },
		{ EBDA_START, BIOS_AREA_END - EBDA_START, E820_RESERVED },
		{ BIOS_AREA_END, ram->lowmem_size - BIOS_AREA_END, E820_RAM },
		{ MMIO_HOLE_END, ram->ram_size - ram->lowmem_size, E820_RAM },
	};
	unsigned int i, n = 0;

	for (i = 0; i < sizeof(e) / sizeof(e[0]) && n < max; i++)
		if (e[i].size)
			table[n++] = e[i];
	return n;
}

static void build_zero_page(const struct boot_ram *ram,
			    const struct boot_files *files,
			    const struct boot_info *info)
{
	struct boot_params *bp = (void *)(ram->base + ZERO_PAGE_START);
	const uint8_t *img = files->kernel;
	/* The header's own length: byte 0x201 counts from 0x202 on. */
	size_t hdr_end = 0x202 + img[0x201];

	memset(bp, 0, sizeof(*bp));
	if (hdr_end > SETUP_HEADER_OFFSET + sizeof(struct setup_header))
		hdr_end = SETUP_HEADER_OFFSET + sizeof(struct setup_header);
	memcpy((uint8_t *)bp + SETUP_HEADER_OFFSET, img + SETUP_HEADER_OFFSET,
	       hdr_end - SETUP_HEADER_OFFSET);

	bp->hdr.type_of_loader = LOADER_TYPE_UNDEFINED;
	bp->hdr.code32_start = info->kernel_addr;
	bp->hdr.cmd_line_ptr = CMDLINE_START;
	bp->hdr.ramdisk_image = info->initrd_addr;
	bp->hdr.ramdisk_size = info->initrd_size;
	bp->acpi_rsdp_addr = files->acpi_rsdp;
	bp->e820_entries = boot__build_e820(bp->e820_table,
					    E820_MAX_ENTRIES_ZEROPAGE, ram);
}

int boot__load(const struct boot_ram *ram, const struct boot_files *files,
	       struct boot_info *info, char *err, size_t errlen)
{
	const struct setup_header *hdr;
	size_t pm_offset, pm_size, cmdlen;
	uint64_t need, kernel_end;

	if (boot__check_bzimage(files->kernel, files->kernel_size, err, errlen))
		return -1;
	hdr = image_header(files->kernel);
	pm_offset = (size_t)(setup_sects(hdr) + 1) * SECTOR_SIZE;
	pm_size = files->kernel_size - pm_offset;

	/* init_size covers decompression in place; never load less. */
	need = hdr->init_size > pm_size ? hdr->init_size : pm_size;
	memset(info, 0, sizeof(*info));
	info->protocol = hdr->version;
	info->kernel_addr = choose_kernel_addr(hdr, ram->lowmem_size, need);
	kernel_end = align_up(info->kernel_addr + need, SZ_4K);
	if (kernel_end > ram->lowmem_size)
		return err__set(err, errlen,
				"kernel needs %llu MiB of RAM above 1 MiB; --mem is too small",
				(unsigned long long)(need >> 20) + 1);
	memcpy(ram->base + info->kernel_addr, files->kernel + pm_offset,
	       pm_size);
	info->entry = info->kernel_addr + ENTRY64_OFFSET;

	cmdlen = strlen(files->cmdline);
	if (cmdlen + 1 > CMDLINE_MAX || cmdlen > hdr->cmdline_size)
		return err__set(err, errlen,
				"command line is %zu bytes; the kernel takes at most %u",
				cmdlen, hdr->cmdline_size);
	memcpy(ram->base + CMDLINE_START, files->cmdline, cmdlen + 1);

	if (files->initrd && files->initrd_size) {
		if (place_initrd(ram, hdr, kernel_end, files->initrd_size,
				 &info->initrd_addr))
			return err__set(err, errlen,
					"initrd (%zu bytes) does not fit in guest RAM beside the kernel",
					files->initrd_size);
		memcpy(ram->base + info->initrd_addr, files->initrd,
		       files->initrd_size);
		info->initrd_size = files->initrd_size;
	}

	build_zero_page(ram, files, info);
	boot__setup_page_tables(ram->base);
	boot__setup_gdt(ram->base);
	return 0;
}

void boot__setup_page_tables(uint8_t *lowmem)
{
	uint64_t *pml4 = (uint64_t *)(lowmem + BOOT_PML4_START);
	uint64_t *pdpt = (uint64_t *)(lowmem + BOOT_PDPT_START);
	uint64_t *pd = (uint64_t *)(lowmem + BOOT_PD_START);
	unsigned int i;

	memset(pml4, 0, SZ_4K);
	memset(pdpt, 0, SZ_4K);
	pml4[0] = BOOT_PDPT_START | PTE_PRESENT | PTE_RW;
	for (i = 0; i < BOOT_PD_COUNT; i++)
		pdpt[i] = (BOOT_PD_START + i * SZ_4K) | PTE_PRESENT | PTE_RW;
	for (i = 0; i < BOOT_PD_COUNT * 512; i++)
		pd[i] = (uint64_t)i * SZ_2M | PTE_PRESENT | PTE_RW | PTE_PS;
}

/* Descriptor from base, limit and the flags/access bits (Intel SDM 3.4.5). */
static uint64_t gdt_entry(uint16_t flags, uint32_t base, uint32_t limit)
{
	return ((uint64_t)(base & 0xff000000) << 32) |
	       ((uint64_t)(flags & 0xf0ff) << 40) |
	       ((uint64_t)(limit & 0x000f0000) << 32) |
	       ((uint64_t)(base & 0x00ffffff) << 16) |
	       (uint64_t)(limit & 0x0000ffff);
}

void boot__setup_gdt(uint8_t *lowmem)
{
	uint64_t *gdt = (uint64_t *)(lowmem + BOOT_GDT_START);

	memset(gdt, 0, BOOT_GDT_ENTRIES * sizeof(*gdt));
	gdt[BOOT_CS / 8] = gdt_entry(0xa09b, 0, 0xfffff);	/* 64-bit code */
	gdt[BOOT_DS / 8] = gdt_entry(0xc093, 0, 0xfffff);	/* data */
	gdt[BOOT_TSS / 8] = gdt_entry(0x008b, 0, 0x67);		/* busy TSS */
	/* An empty IDT: the kernel installs its own before enabling IRQs. */
	memset(lowmem + BOOT_IDT_START, 0, 16);
}
