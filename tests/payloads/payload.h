/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Constants shared by the payload guests (GNU assembler, via cpp).
 *
 * The values mirror vmm/arch/x86/layout.h and the Linux boot protocol on
 * purpose rather than including them: a payload checks the VMM against the
 * contract, so it must not silently follow the VMM when the VMM changes.
 */
#ifndef GPIN_PAYLOAD_H
#define GPIN_PAYLOAD_H

/* I/O ports */
#define PORT_COM1		0x3f8
#define UART_THR		0		/* offsets from PORT_COM1 */
#define UART_LSR		5
#define UART_LSR_THRE		0x20
#define PORT_I8042_CMD		0x64
#define I8042_CMD_RESET		0xfe
#define PORT_EXIT		0x501

/* Where the VMM puts things (contract) */
#define ZERO_PAGE		0x7000
#define BOOT_STACK_TOP		0x8ff0
#define BOOT_CS			0x10
#define BOOT_DS			0x18
#define AP_TRAMPOLINE		0x10000
#define LAPIC_BASE		0xfee00000
#define IOAPIC_BASE		0xfec00000
#define BIOS_START		0xe0000
#define BIOS_END		0x100000

/* struct boot_params offsets (Linux arch/x86/include/uapi/asm/bootparam.h) */
#define BP_E820_ENTRIES		0x1e8
#define BP_HDR_MAGIC		0x202		/* "HdrS" */
#define BP_TYPE_OF_LOADER	0x210
#define BP_CMD_LINE_PTR		0x228
#define BP_E820_TABLE		0x2d0
#define E820_MAX_ENTRIES	128

/* xAPIC registers (offsets from LAPIC_BASE) */
#define LAPIC_ID		0x020
#define LAPIC_VERSION		0x030
#define LAPIC_ICR_LO		0x300
#define LAPIC_ICR_HI		0x310
#define ICR_DELIVERY_PENDING	(1 << 12)
#define ICR_INIT		(5 << 8)
#define ICR_STARTUP		(6 << 8)
#define ICR_LEVEL_ASSERT	(1 << 14)
#define ICR_ALL_BUT_SELF	(3 << 18)

/* Exit codes a payload uses for "the VMM broke the contract" */
#define EXIT_OK			0
#define EXIT_FAIL		1
#define EXIT_NO_ARG		254

#endif /* GPIN_PAYLOAD_H */
