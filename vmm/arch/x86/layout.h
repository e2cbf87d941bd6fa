/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Every guest-physical address gpin-vmm uses, in one place.
 *
 * Low memory (below 1 MiB) holds what the VMM builds for the guest before
 * the first instruction runs; the kernel is loaded at 1 MiB or above.  The
 * 3..4 GiB window is never RAM: it holds the device MMIO (virtio, IOAPIC,
 * LAPIC), so RAM beyond 3 GiB is placed above 4 GiB.
 */
#ifndef GPIN_X86_LAYOUT_H
#define GPIN_X86_LAYOUT_H

#define SZ_1K			0x400ULL
#define SZ_4K			0x1000ULL
#define SZ_1M			0x100000ULL
#define SZ_2M			0x200000ULL
#define SZ_1G			0x40000000ULL
#define SZ_4G			0x100000000ULL

/* Boot-time structures, all in the first 640 KiB of RAM. */
#define BOOT_GDT_START		0x00000500ULL	/* 6 entries */
#define BOOT_IDT_START		0x00000540ULL	/* empty IDT, limit 0 */
#define ZERO_PAGE_START		0x00007000ULL	/* struct boot_params */
#define BOOT_STACK_TOP		0x00008ff0ULL
#define BOOT_PML4_START		0x00009000ULL
#define BOOT_PDPT_START		0x0000a000ULL
#define BOOT_PD_START		0x0000b000ULL	/* 4 PDs: 0..4 GiB in 2 MiB pages */
#define BOOT_PD_COUNT		4
#define CMDLINE_START		0x00020000ULL
#define CMDLINE_MAX		4096		/* including the NUL */

/* Real-mode trampoline page an AP payload may use (tests only). */
#define AP_TRAMPOLINE_START	0x00010000ULL

/* RAM stops at the EBDA; the BIOS area up to 1 MiB is reserved. */
#define EBDA_START		0x0009fc00ULL
#define BIOS_AREA_START		0x000e0000ULL
#define ACPI_RSDP_START		0x000e0000ULL	/* found by the BIOS-area scan */
#define ACPI_TABLES_START	0x000e0100ULL
#define ACPI_TABLES_END		0x000f0000ULL
#define BIOS_AREA_END		0x00100000ULL

/* Where the protected-mode kernel goes unless it prefers elsewhere. */
#define KERNEL_START_DEFAULT	0x00100000ULL

/* RAM below the MMIO hole; the rest of the guest's memory is above 4 GiB. */
#define MMIO_HOLE_START		0xc0000000ULL
#define MMIO_HOLE_END		SZ_4G

/* Device windows inside the hole. */
#define VIRTIO_MMIO_START	0xd0000000ULL
#define VIRTIO_MMIO_SIZE	0x1000ULL	/* per device */
#define VIRTIO_MMIO_MAX		32
/*
 * PCI memory BARs: the host bridge's window (the DSDT's PCI0 _CRS), one
 * fixed slot per device (vm.c).
 */
#define PCI_MMIO_START		0xe0000000ULL
#define PCI_MMIO_SIZE		0x10000000ULL
#define PCI_MMIO_SLOT_SIZE	0x100000ULL
/*
 * KVM's real-mode helpers on Intel: a three-page TSS and the identity-map
 * page, both in the hole where no device is.
 */
#define KVM_IDENTITY_MAP_ADDR	0xfffbc000ULL
#define KVM_TSS_ADDR		0xfffbd000ULL
#define IOAPIC_START		0xfec00000ULL
#define LAPIC_START		0xfee00000ULL
/* MSI messages are writes into the 1 MiB window at the local APICs. */
#define MSI_ADDR_WINDOW		0xfee00000u
#define MSI_ADDR_WINDOW_MASK	0xfff00000u

/*
 * Interrupt lines (GSIs): the PC's ISA IRQs 0..15 on both 8259 PICs and
 * the IOAPIC, except that the PIT's IRQ 0 reaches IOAPIC pin 2 (the MADT's
 * override); the IOAPIC pins above them are the virtio-mmio disks',
 * level-triggered: disk i on VIRTIO_GSI_BASE + i.
 */
#define PIC_PINS		8
#define ISA_IRQS		16
#define IOAPIC_PINS		24
#define PIT_IOAPIC_PIN		2
#define VIRTIO_GSI_BASE		ISA_IRQS

/* Legacy I/O ports, and how many bytes each device claims there. */
#define PORT_I8042_DATA		0x60
#define PORT_I8042_CMD		0x64
#define PORT_RTC_INDEX		0x70		/* index 0x70, data 0x71 */
#define PORT_RTC_LEN		2
#define PORT_COM1		0x3f8
#define IRQ_COM1		4
#define PORT_ACPI_PM1A_EVT	0x600
#define ACPI_PM1_EVT_LEN	4		/* PM1_STS at 0, PM1_EN at 2 */
#define PORT_ACPI_PM1A_CNT	0x604
#define ACPI_PM1_CNT_LEN	2
#define IRQ_ACPI_SCI		9
#define PORT_EXIT		0x501		/* test exit device, 1 byte */
#define PORT_PVPANIC		0x505
#define PVPANIC_LEN		1
#define PORT_PCI_CONF1		0xcf8		/* address 0xcf8, data 0xcfc */
#define PORT_PCI_CONF1_LEN	8

/* Guest memory limits accepted by --mem. */
#define GUEST_MEM_MIN		(64ULL * SZ_1M)
#define GUEST_MEM_MAX		(64ULL * SZ_1G)

#endif /* GPIN_X86_LAYOUT_H */
