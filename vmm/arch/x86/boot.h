/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The Linux x86 boot protocol, 64-bit entry: load a bzImage, an initramfs
 * and a command line into guest RAM and build the zero page with its e820
 * map, the identity page tables and the GDT the entry point expects.
 * Everything here writes plain memory, so it is tested without KVM.
 */
#ifndef GPIN_X86_BOOT_H
#define GPIN_X86_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include <asm/bootparam.h>

/* Oldest protocol with xloadflags, which says whether a 64-bit entry exists. */
#define BOOT_PROTOCOL_MIN	0x020c

struct boot_ram {
	uint8_t *base;		/* host view of guest-physical 0 */
	uint64_t lowmem_size;	/* RAM below the MMIO hole */
	uint64_t ram_size;	/* all RAM, the rest mapped from 4 GiB */
};

struct boot_files {
	const uint8_t *kernel;
	size_t kernel_size;
	const uint8_t *initrd;	/* may be NULL */
	size_t initrd_size;
	const char *cmdline;
	uint64_t acpi_rsdp;	/* 0: let the guest scan for it */
};

struct boot_info {
	uint64_t kernel_addr;	/* where the protected-mode code went */
	uint64_t entry;		/* 64-bit entry point */
	uint64_t initrd_addr;
	uint64_t initrd_size;
	unsigned int protocol;	/* boot protocol version, e.g. 0x020f */
};

/*
 * Checks that @img is a bzImage this loader can start.  0 or -1 with a
 * reason in @err.
 */
int boot__check_bzimage(const uint8_t *img, size_t size, char *err,
			size_t errlen);

/* Loads everything and builds the zero page.  0 or -1 with @err. */
int boot__load(const struct boot_ram *ram, const struct boot_files *files,
	       struct boot_info *info, char *err, size_t errlen);

/* Fills @table from the RAM layout; returns the number of entries. */
unsigned int boot__build_e820(struct boot_e820_entry *table, unsigned int max,
			      const struct boot_ram *ram);

/* Identity-maps 0..4 GiB with 2 MiB pages and writes the boot GDT. */
void boot__setup_page_tables(uint8_t *lowmem);
void boot__setup_gdt(uint8_t *lowmem);

/* GDT selectors the 64-bit entry runs with. */
#define BOOT_CS			0x10
#define BOOT_DS			0x18
#define BOOT_TSS		0x20
#define BOOT_GDT_ENTRIES	6	/* null, unused, code, data, 16-byte TSS */

#endif /* GPIN_X86_BOOT_H */
