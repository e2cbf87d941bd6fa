/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the ACPI table builders share (arch/x86/acpi*.c): the common table
 * header, the Generic Address Structure, the bump allocator over the table
 * area and the per-table builders.  One file per table: acpi_dsdt.c (the
 * DSDT and its AML), acpi_fadt.c (FADT and FACS), acpi_madt.c (MADT);
 * acpi.c lays them out, lists them in the XSDT and RSDT and writes the
 * RSDP.
 */
#ifndef GPIN_X86_ACPI_TABLE_H
#define GPIN_X86_ACPI_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "acpi.h"

#define __packed		__attribute__((packed))

#define ACPI_OEM_ID		"GPIN  "
#define ACPI_OEM_TABLE_ID	"GPINVMM "
#define ACPI_OEM_REVISION	1
#define ACPI_CREATOR_ID		"GPIN"
#define ACPI_CREATOR_REVISION	1

/* Generic Address Structure address spaces and access sizes. */
#define ACPI_GAS_SYSTEM_IO	1
#define ACPI_GAS_ACCESS_BYTE	1
#define ACPI_GAS_ACCESS_WORD	2

struct acpi_table_header {
	char signature[4];
	uint32_t length;		/* of the whole table, header included */
	uint8_t revision;
	uint8_t checksum;		/* all bytes of the table sum to 0 */
	char oem_id[6];
	char oem_table_id[8];
	uint32_t oem_revision;
	char creator_id[4];
	uint32_t creator_revision;
} __packed;

struct acpi_gas {
	uint8_t space_id;
	uint8_t bit_width;
	uint8_t bit_offset;
	uint8_t access_size;
	uint64_t address;
} __packed;

_Static_assert(sizeof(struct acpi_table_header) == 36, "ACPI header");
_Static_assert(sizeof(struct acpi_gas) == 12, "GAS");

/* A bump allocator over the table area; the area starts out zeroed. */
struct acpi_builder {
	uint8_t *mem;		/* host view of guest-physical 0 */
	uint64_t next;		/* first free guest-physical byte */
	uint64_t end;
};

/* @size bytes at @align in the table area, at guest-physical *@gpa; NULL when full. */
void *acpi_builder__alloc(struct acpi_builder *b, uint64_t size, uint64_t align,
			  uint64_t *gpa);
/* The byte that makes @len bytes at @buf sum to 0. */
uint8_t acpi__checksum(const void *buf, size_t len);
void acpi_header__init(struct acpi_table_header *h, const char *sig,
		       uint32_t length, uint8_t revision);
/* Last step of every table: nothing may change after the checksum. */
void acpi_header__seal(struct acpi_table_header *h);
struct acpi_gas acpi_gas__io(uint16_t port, uint8_t bytes, uint8_t access_size);

/* The tables, each at *@gpa in the table area; 0 or -ENOSPC. */
int acpi_dsdt__build(struct acpi_builder *b, const struct acpi_pci_host *pci,
		     const struct acpi_virtio_mmio *virtio,
		     unsigned int nvirtio, uint64_t *gpa);
int acpi_facs__build(struct acpi_builder *b, uint64_t *gpa);
int acpi_fadt__build(struct acpi_builder *b, uint64_t dsdt, uint64_t facs,
		     uint64_t *gpa);
int acpi_madt__build(struct acpi_builder *b, unsigned int ncpus,
		     uint64_t *gpa);

#endif /* GPIN_X86_ACPI_TABLE_H */
