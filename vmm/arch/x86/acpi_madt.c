// SPDX-License-Identifier: GPL-2.0-only
/* The MADT: the local APICs, the IOAPIC and the interrupt overrides. */
#include <errno.h>
#include <string.h>

#include "acpi_table.h"
#include "layout.h"

/* MADT flags and entry types (section 5.2.12). */
#define MADT_PCAT_COMPAT	(1u << 0)
#define MADT_LAPIC		0
#define MADT_IOAPIC		1
#define MADT_INT_OVERRIDE	2
#define MADT_LAPIC_NMI		4
#define MADT_LAPIC_ENABLED	(1u << 0)
#define MADT_ALL_CPUS		0xff

/* MPS INTI flags: polarity in bits 1:0, trigger mode in bits 3:2. */
#define MPS_INTI_ACTIVE_HIGH	0x1
#define MPS_INTI_EDGE		(0x1 << 2)
#define MPS_INTI_LEVEL		(0x3 << 2)

struct acpi_madt {
	struct acpi_table_header header;
	uint32_t lapic_address;
	uint32_t flags;
} __packed;

struct madt_lapic {
	uint8_t type;
	uint8_t length;
	uint8_t processor_uid;
	uint8_t apic_id;
	uint32_t flags;
} __packed;

struct madt_ioapic {
	uint8_t type;
	uint8_t length;
	uint8_t ioapic_id;
	uint8_t reserved;
	uint32_t address;
	uint32_t gsi_base;
} __packed;

struct madt_int_override {
	uint8_t type;
	uint8_t length;
	uint8_t bus;			/* 0: ISA */
	uint8_t source;			/* ISA IRQ */
	uint32_t gsi;
	uint16_t flags;			/* MPS INTI */
} __packed;

struct madt_lapic_nmi {
	uint8_t type;
	uint8_t length;
	uint8_t processor_uid;
	uint16_t flags;			/* MPS INTI */
	uint8_t lint;
} __packed;

_Static_assert(sizeof(struct madt_lapic) == 8, "MADT LAPIC");
_Static_assert(sizeof(struct madt_ioapic) == 12, "MADT IOAPIC");
_Static_assert(sizeof(struct madt_int_override) == 10, "MADT ISO");
_Static_assert(sizeof(struct madt_lapic_nmi) == 6, "MADT LAPIC NMI");

/* MADT entries are packed back to back, so each is copied into place. */
static uint8_t *madt_put(uint8_t *p, const void *entry, size_t len)
{
	memcpy(p, entry, len);
	return p + len;
}

#define MADT_PUT(p, type, ...)						\
	madt_put(p, &(struct type) { __VA_ARGS__ }, sizeof(struct type))

/*
 * One enabled local APIC per vCPU (UID = APIC id = index, the ids KVM
 * gives vCPUs by default), the in-kernel IOAPIC with GSIs 0-23, and two
 * overrides:
 *  - IRQ0 -> GSI2: KVM routes the in-kernel PIT's GSI 0 to IOAPIC pin 2,
 *    as on a real PC chipset.
 *  - IRQ9 -> GSI9 level, active high: without an override Linux assumes
 *    the SCI is level, active low; KVM's lines are active high.
 * The IOAPIC id follows the APIC ids so the two never clash.
 */
int acpi_madt__build(struct acpi_builder *b, unsigned int ncpus,
		     uint64_t *gpa)
{
	uint32_t len = sizeof(struct acpi_madt) +
		       ncpus * sizeof(struct madt_lapic) +
		       sizeof(struct madt_ioapic) +
		       2 * sizeof(struct madt_int_override) +
		       sizeof(struct madt_lapic_nmi);
	struct acpi_madt *madt = acpi_builder__alloc(b, len, 16, gpa);
	uint8_t *p;
	unsigned int cpu;

	if (!madt)
		return -ENOSPC;
	/* Revision 5 (ACPI 6.3); every LAPIC is enabled, so Online Capable is moot. */
	acpi_header__init(&madt->header, "APIC", len, 5);
	madt->lapic_address = LAPIC_START;
	madt->flags = MADT_PCAT_COMPAT;

	p = (uint8_t *)(madt + 1);
	for (cpu = 0; cpu < ncpus; cpu++)
		p = MADT_PUT(p, madt_lapic, .type = MADT_LAPIC,
			     .length = sizeof(struct madt_lapic),
			     .processor_uid = cpu, .apic_id = cpu,
			     .flags = MADT_LAPIC_ENABLED);
	p = MADT_PUT(p, madt_ioapic, .type = MADT_IOAPIC,
		     .length = sizeof(struct madt_ioapic),
		     .ioapic_id = ncpus, .address = IOAPIC_START,
		     .gsi_base = 0);
	p = MADT_PUT(p, madt_int_override, .type = MADT_INT_OVERRIDE,
		     .length = sizeof(struct madt_int_override),
		     .bus = 0, .source = 0, .gsi = PIT_IOAPIC_PIN,
		     .flags = MPS_INTI_EDGE | MPS_INTI_ACTIVE_HIGH);
	p = MADT_PUT(p, madt_int_override, .type = MADT_INT_OVERRIDE,
		     .length = sizeof(struct madt_int_override),
		     .bus = 0, .source = IRQ_ACPI_SCI, .gsi = IRQ_ACPI_SCI,
		     .flags = MPS_INTI_LEVEL | MPS_INTI_ACTIVE_HIGH);
	/* Linux wires LINT1 as NMI anyway, but says so if this disagrees. */
	p = MADT_PUT(p, madt_lapic_nmi, .type = MADT_LAPIC_NMI,
		     .length = sizeof(struct madt_lapic_nmi),
		     .processor_uid = MADT_ALL_CPUS,
		     .flags = 0,		/* conforms to the bus */
		     .lint = 1);

	acpi_header__seal(&madt->header);
	return 0;
}
