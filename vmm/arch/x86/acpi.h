/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ACPI tables for the guest: RSDP, XSDT and RSDT, a full (not
 * hardware-reduced) FADT with its FACS and DSDT, and an MADT.  Built once
 * in guest low memory before the first vCPU runs; pure functions of their
 * arguments, so tests need no KVM.
 */
#ifndef GPIN_X86_ACPI_H
#define GPIN_X86_ACPI_H

#include <stddef.h>
#include <stdint.h>

/* APIC ids are 8 bits in xAPIC mode; 64 is also what the VMM accepts. */
#define ACPI_MAX_CPUS		64
/* virtio-mmio devices the DSDT can list (VIRTIO_MMIO_MAX windows). */
#define ACPI_MAX_VIRTIO		32

/*
 * A virtio-mmio device for the DSDT: Device (VRnn) with _HID "LNRO0005"
 * (what Linux's virtio_mmio driver binds), _UID nn and a _CRS of its
 * register window and its level-triggered, active-high interrupt.
 */
struct acpi_virtio_mmio {
	uint64_t base;
	uint32_t size;
	uint32_t gsi;
};

/*
 * A PCI host bridge for the DSDT: Device (PCI0), _HID PNP0A03, whose
 * _CRS gives bus 0, the configuration ports and the memory window BARs
 * live in.  Linux scans PCI buses only from such a device once ACPI is
 * on (it skips its legacy probe), and needs the window to accept the
 * BAR addresses the VMM assigned instead of moving them.
 */
struct acpi_pci_host {
	uint32_t mmio_base;
	uint32_t mmio_size;
};

/*
 * Writes the RSDP at ACPI_RSDP_START and the tables into
 * [ACPI_TABLES_START, ACPI_TABLES_END) of @lowmem, the host view of
 * guest-physical 0.., @lowmem_size bytes long.  vCPU i gets local APIC
 * id i; the DSDT has PCI0 if @pci is not NULL and lists
 * @virtio[0..nvirtio) as VR00, VR01, ...  Touches nothing else.  Returns
 * 0, -EINVAL for a NULL or too small @lowmem, for @ncpus outside
 * 1..ACPI_MAX_CPUS, for a PCI window that is empty or not below 4 GiB,
 * for more than ACPI_MAX_VIRTIO devices or one whose window is not below
 * 4 GiB or whose GSI is not an IOAPIC pin, or -ENOSPC if the tables do
 * not fit (then no RSDP is written).
 */
int acpi__build(void *lowmem, size_t lowmem_size, unsigned int ncpus,
		const struct acpi_pci_host *pci,
		const struct acpi_virtio_mmio *virtio, unsigned int nvirtio);

/* Guest-physical address of the RSDP, for boot_params.acpi_rsdp_addr. */
uint64_t acpi__rsdp_addr(void);

#endif /* GPIN_X86_ACPI_H */
