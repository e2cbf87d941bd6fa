// SPDX-License-Identifier: GPL-2.0-only
/*
 * ACPI tables, laid out as ACPI 6.3 describes them.
 *
 * Why a full FADT rather than a hardware-reduced one: Linux drops the
 * legacy PIC and PIT on a hardware-reduced platform, and our boot relies
 * on both.  A full FADT in turn requires a FACS and the PM1a event and
 * control blocks, which devices/acpi_pm.c emulates; S5 is the only sleep
 * state offered, so a guest "poweroff" ends the VM.
 *
 * The tables are packed little-endian structs written straight into
 * guest memory: the VMM only runs on x86 hosts.  This file lays the
 * tables out and writes RSDT, XSDT and RSDP; each table has its own file
 * (acpi_table.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "acpi_table.h"
#include "layout.h"

struct acpi_rsdp {
	char signature[8];
	uint8_t checksum;		/* of the first 20 bytes (ACPI 1.0 part) */
	char oem_id[6];
	uint8_t revision;		/* 2: ACPI 2.0+, XSDT present */
	uint32_t rsdt_address;
	uint32_t length;
	uint64_t xsdt_address;
	uint8_t ext_checksum;		/* of all 36 bytes */
	uint8_t reserved[3];
} __packed;

_Static_assert(sizeof(struct acpi_rsdp) == 36, "RSDP");
_Static_assert(ACPI_RSDP_START % 16 == 0, "the RSDP scan looks at 16-byte boundaries");
_Static_assert(ACPI_RSDP_START + sizeof(struct acpi_rsdp) <= ACPI_TABLES_START,
	       "RSDP overlaps the tables");
_Static_assert(ACPI_TABLES_END <= SZ_4G, "RSDT holds 32-bit addresses");

void *acpi_builder__alloc(struct acpi_builder *b, uint64_t size, uint64_t align,
			  uint64_t *gpa)
{
	uint64_t start = (b->next + align - 1) & ~(align - 1);

	if (start > b->end || size > b->end - start)
		return NULL;
	b->next = start + size;
	*gpa = start;
	return b->mem + start;
}

uint8_t acpi__checksum(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint8_t sum = 0;

	while (len--)
		sum += *p++;
	return (uint8_t)-sum;
}

void acpi_header__init(struct acpi_table_header *h, const char *sig,
		       uint32_t length, uint8_t revision)
{
	memcpy(h->signature, sig, sizeof(h->signature));
	h->length = length;
	h->revision = revision;
	memcpy(h->oem_id, ACPI_OEM_ID, sizeof(h->oem_id));
	memcpy(h->oem_table_id, ACPI_OEM_TABLE_ID, sizeof(h->oem_table_id));
	h->oem_revision = ACPI_OEM_REVISION;
	memcpy(h->creator_id, ACPI_CREATOR_ID, sizeof(h->creator_id));
	h->creator_revision = ACPI_CREATOR_REVISION;
}

void acpi_header__seal(struct acpi_table_header *h)
{
	h->checksum = 0;
	h->checksum = acpi__checksum(h, h->length);
}

struct acpi_gas acpi_gas__io(uint16_t port, uint8_t bytes,
			     uint8_t access_size)
{
	return (struct acpi_gas) {
		.space_id = ACPI_GAS_SYSTEM_IO,
		.bit_width = bytes * 8,
		.access_size = access_size,
		.address = port,
	};
}

/*
 * The XSDT and RSDT list the same tables; only the entry width differs.
 * The entries are not naturally aligned after the 36-byte header, so
 * each one is copied in (little-endian host, so the low bytes first).
 */
static int acpi_build_sdt(struct acpi_builder *b, const char *sig,
			  size_t entry_size, const uint64_t *tables,
			  unsigned int n, uint64_t *gpa)
{
	uint32_t len = sizeof(struct acpi_table_header) + n * entry_size;
	struct acpi_table_header *h = acpi_builder__alloc(b, len, 16, gpa);
	uint8_t *entries;
	unsigned int i;

	if (!h)
		return -ENOSPC;
	acpi_header__init(h, sig, len, 1);
	entries = (uint8_t *)(h + 1);
	for (i = 0; i < n; i++)
		memcpy(entries + i * entry_size, &tables[i], entry_size);
	acpi_header__seal(h);
	return 0;
}

static void acpi_build_rsdp(uint8_t *mem, uint64_t rsdt, uint64_t xsdt)
{
	struct acpi_rsdp *rsdp = (struct acpi_rsdp *)(mem + ACPI_RSDP_START);

	memcpy(rsdp->signature, "RSD PTR ", sizeof(rsdp->signature));
	memcpy(rsdp->oem_id, ACPI_OEM_ID, sizeof(rsdp->oem_id));
	rsdp->revision = 2;
	rsdp->rsdt_address = rsdt;
	rsdp->length = sizeof(*rsdp);
	rsdp->xsdt_address = xsdt;
	rsdp->checksum = acpi__checksum(rsdp, offsetof(struct acpi_rsdp, length));
	rsdp->ext_checksum = acpi__checksum(rsdp, sizeof(*rsdp));
}

/* Tables the XSDT and RSDT list; the DSDT and FACS hang off the FADT. */
enum { SDT_FADT, SDT_MADT, SDT_COUNT };

static int acpi_build_tables(struct acpi_builder *b, unsigned int ncpus,
			     const struct acpi_pci_host *pci,
			     const struct acpi_virtio_mmio *virtio,
			     unsigned int nvirtio, uint64_t *rsdt, uint64_t *xsdt)
{
	uint64_t dsdt, facs, sdt[SDT_COUNT];
	int ret;

	ret = acpi_dsdt__build(b, pci, virtio, nvirtio, &dsdt);
	if (!ret)
		ret = acpi_facs__build(b, &facs);
	if (!ret)
		ret = acpi_fadt__build(b, dsdt, facs, &sdt[SDT_FADT]);
	if (!ret)
		ret = acpi_madt__build(b, ncpus, &sdt[SDT_MADT]);
	if (!ret)
		ret = acpi_build_sdt(b, "XSDT", sizeof(uint64_t), sdt,
				     SDT_COUNT, xsdt);
	if (!ret)
		ret = acpi_build_sdt(b, "RSDT", sizeof(uint32_t), sdt,
				     SDT_COUNT, rsdt);
	return ret;
}

static bool virtio_ok(const struct acpi_virtio_mmio *virtio,
		      unsigned int nvirtio)
{
	unsigned int i;

	if (nvirtio > ACPI_MAX_VIRTIO || (nvirtio && !virtio))
		return false;
	for (i = 0; i < nvirtio; i++)
		if (!virtio[i].size || virtio[i].base >= SZ_4G ||
		    virtio[i].size > SZ_4G - virtio[i].base ||
		    virtio[i].gsi >= IOAPIC_PINS)
			return false;
	return true;
}

static bool pci_ok(const struct acpi_pci_host *pci)
{
	return !pci || (pci->mmio_size &&
			pci->mmio_size <= SZ_4G - pci->mmio_base);
}

int acpi__build(void *lowmem, size_t lowmem_size, unsigned int ncpus,
		const struct acpi_pci_host *pci,
		const struct acpi_virtio_mmio *virtio, unsigned int nvirtio)
{
	struct acpi_builder b = {
		.mem = lowmem,
		.next = ACPI_TABLES_START,
		.end = ACPI_TABLES_END,
	};
	uint64_t rsdt, xsdt;
	int ret;

	if (!lowmem || lowmem_size < ACPI_TABLES_END)
		return -EINVAL;
	if (ncpus == 0 || ncpus > ACPI_MAX_CPUS)
		return -EINVAL;
	if (!virtio_ok(virtio, nvirtio) || !pci_ok(pci))
		return -EINVAL;

	/* Whatever was there before must not look like a table or an RSDP. */
	memset(b.mem + ACPI_RSDP_START, 0, ACPI_TABLES_END - ACPI_RSDP_START);
	ret = acpi_build_tables(&b, ncpus, pci, virtio, nvirtio, &rsdt, &xsdt);
	if (ret)
		return ret;
	/* Last, so a failed build leaves nothing for the guest to find. */
	acpi_build_rsdp(b.mem, rsdt, xsdt);
	return 0;
}

uint64_t acpi__rsdp_addr(void)
{
	return ACPI_RSDP_START;
}
