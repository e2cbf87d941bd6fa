// SPDX-License-Identifier: GPL-2.0-only
/* The FADT and the FACS it points at (see acpi.c for why a full FADT). */
#include <errno.h>
#include <string.h>

#include "acpi_table.h"
#include "layout.h"
#include "devices/acpi_pm.h"

/* FADT Flags (ACPI 6.3, table 5-34). */
#define FADT_F_WBINVD		(1u << 0)
#define FADT_F_PROC_C1		(1u << 2)
#define FADT_F_PWR_BUTTON	(1u << 4)	/* no fixed-feature button */
#define FADT_F_SLP_BUTTON	(1u << 5)	/* no fixed-feature button */
#define FADT_F_RESET_REG_SUP	(1u << 10)
#define FADT_F_HW_REDUCED	(1u << 20)

/* FADT IA-PC boot architecture flags (table 5-35). */
#define FADT_BOOT_LEGACY_DEVICES (1u << 0)
#define FADT_BOOT_NO_VGA	(1u << 2)

/* P_LVL2_LAT above 100 and P_LVL3_LAT above 1000 mean "no C2 / C3". */
#define FADT_NO_C2_LAT		0x0fff
#define FADT_NO_C3_LAT		0x0fff

/* CMOS index of the century byte devices/rtc.c keeps. */
#define FADT_CENTURY_CMOS	0x32

/* The i8042's pulse-reset command, which devices/i8042.c acts on. */
#define ACPI_RESET_VALUE	0xfe

struct acpi_fadt {
	struct acpi_table_header header;
	uint32_t firmware_ctrl;
	uint32_t dsdt;
	uint8_t reserved0;
	uint8_t preferred_pm_profile;
	uint16_t sci_int;
	uint32_t smi_cmd;
	uint8_t acpi_enable;
	uint8_t acpi_disable;
	uint8_t s4bios_req;
	uint8_t pstate_cnt;
	uint32_t pm1a_evt_blk;
	uint32_t pm1b_evt_blk;
	uint32_t pm1a_cnt_blk;
	uint32_t pm1b_cnt_blk;
	uint32_t pm2_cnt_blk;
	uint32_t pm_tmr_blk;
	uint32_t gpe0_blk;
	uint32_t gpe1_blk;
	uint8_t pm1_evt_len;
	uint8_t pm1_cnt_len;
	uint8_t pm2_cnt_len;
	uint8_t pm_tmr_len;
	uint8_t gpe0_blk_len;
	uint8_t gpe1_blk_len;
	uint8_t gpe1_base;
	uint8_t cst_cnt;
	uint16_t p_lvl2_lat;
	uint16_t p_lvl3_lat;
	uint16_t flush_size;
	uint16_t flush_stride;
	uint8_t duty_offset;
	uint8_t duty_width;
	uint8_t day_alrm;
	uint8_t mon_alrm;
	uint8_t century;
	uint16_t iapc_boot_arch;
	uint8_t reserved1;
	uint32_t flags;
	struct acpi_gas reset_reg;
	uint8_t reset_value;
	uint16_t arm_boot_arch;
	uint8_t minor_version;
	uint64_t x_firmware_ctrl;
	uint64_t x_dsdt;
	struct acpi_gas x_pm1a_evt_blk;
	struct acpi_gas x_pm1b_evt_blk;
	struct acpi_gas x_pm1a_cnt_blk;
	struct acpi_gas x_pm1b_cnt_blk;
	struct acpi_gas x_pm2_cnt_blk;
	struct acpi_gas x_pm_tmr_blk;
	struct acpi_gas x_gpe0_blk;
	struct acpi_gas x_gpe1_blk;
	struct acpi_gas sleep_control_reg;
	struct acpi_gas sleep_status_reg;
	uint64_t hypervisor_vendor_id;
} __packed;

struct acpi_facs {
	char signature[4];
	uint32_t length;
	uint32_t hardware_signature;
	uint32_t firmware_waking_vector;
	uint32_t global_lock;
	uint32_t flags;
	uint64_t x_firmware_waking_vector;
	uint8_t version;
	uint8_t reserved0[3];
	uint32_t ospm_flags;
	uint8_t reserved1[24];
} __packed;

_Static_assert(offsetof(struct acpi_fadt, sci_int) == 46, "FADT SCI_INT");
_Static_assert(offsetof(struct acpi_fadt, pm1_evt_len) == 88, "FADT PM1_EVT_LEN");
_Static_assert(offsetof(struct acpi_fadt, iapc_boot_arch) == 109, "FADT IAPC");
_Static_assert(offsetof(struct acpi_fadt, reset_reg) == 116, "FADT RESET_REG");
_Static_assert(offsetof(struct acpi_fadt, x_firmware_ctrl) == 132, "FADT X_FACS");
_Static_assert(offsetof(struct acpi_fadt, sleep_control_reg) == 244, "FADT SLEEP");
_Static_assert(sizeof(struct acpi_fadt) == 276, "FADT (ACPI 6.x)");
_Static_assert(sizeof(struct acpi_facs) == 64, "FACS");

/*
 * The FACS only exists because a non-reduced FADT must point at one; we
 * offer no S3/S4 (no waking vector) and no global lock.  It has no
 * checksum, and the specification wants it 64-byte aligned.
 */
int acpi_facs__build(struct acpi_builder *b, uint64_t *gpa)
{
	struct acpi_facs *facs = acpi_builder__alloc(b, sizeof(*facs), 64, gpa);

	if (!facs)
		return -ENOSPC;
	memcpy(facs->signature, "FACS", sizeof(facs->signature));
	facs->length = sizeof(*facs);
	facs->version = 2;
	return 0;
}

/*
 * What Linux 6.1 does with each field that matters:
 *  - SMI_CMD = 0: ACPICA takes the machine to be in ACPI mode already and
 *    never tries to switch it (acpi_hw_get_mode()).
 *  - IAPC_BOOT_ARCH.8042 clear: a revision >= 2 FADT without it makes
 *    Linux mark the i8042 "firmware absent" (acpi_parse_fadt()), so the
 *    i8042 driver does not probe ports 0x60/0x64.  devices/i8042.c only
 *    knows the reset command; a probe would wait out its self-test
 *    timeouts (seconds of boot time) to learn there is no keyboard.
 *    NO_VGA is simply true; CENTURY names devices/rtc.c's century byte.
 *  - RESET_REG_SUP with an I/O reset register: acpi_reboot(), the first
 *    method of the default reboot=acpi order, writes RESET_VALUE to it.
 *    Port 0x64 value 0xfe is the i8042 pulse-reset, the same write the
 *    next method (reboot=kbd) makes, so either way the VMM sees one reset.
 *  - No PM timer: optional since ACPI 5.0A; Linux then uses other
 *    clocksources.  No GPE blocks: we have no general-purpose events.
 *  - PWR_BUTTON/SLP_BUTTON set: no fixed-feature buttons for Linux to
 *    enable, since we never raise their status bits.
 * FIRMWARE_CTRL is set and X_FIRMWARE_CTRL left 0: the specification
 * wants only one of them non-zero.  X_DSDT and the X_ blocks mirror the
 * 32-bit fields exactly, so ACPICA finds no 32/64 mismatch to warn about.
 */
int acpi_fadt__build(struct acpi_builder *b, uint64_t dsdt,
		     uint64_t facs, uint64_t *gpa)
{
	struct acpi_fadt *fadt = acpi_builder__alloc(b, sizeof(*fadt), 16, gpa);

	if (!fadt)
		return -ENOSPC;
	acpi_header__init(&fadt->header, "FACP", sizeof(*fadt), 6);
	fadt->minor_version = 3;
	fadt->firmware_ctrl = facs;
	fadt->dsdt = dsdt;
	fadt->x_dsdt = dsdt;
	fadt->sci_int = IRQ_ACPI_SCI;
	fadt->smi_cmd = 0;

	fadt->pm1a_evt_blk = PORT_ACPI_PM1A_EVT;
	fadt->pm1_evt_len = ACPI_PM1_EVT_LEN;
	fadt->x_pm1a_evt_blk = acpi_gas__io(PORT_ACPI_PM1A_EVT, ACPI_PM1_EVT_LEN,
					   ACPI_GAS_ACCESS_WORD);
	fadt->pm1a_cnt_blk = PORT_ACPI_PM1A_CNT;
	fadt->pm1_cnt_len = ACPI_PM1_CNT_LEN;
	fadt->x_pm1a_cnt_blk = acpi_gas__io(PORT_ACPI_PM1A_CNT, ACPI_PM1_CNT_LEN,
					   ACPI_GAS_ACCESS_WORD);

	fadt->p_lvl2_lat = FADT_NO_C2_LAT;
	fadt->p_lvl3_lat = FADT_NO_C3_LAT;
	fadt->century = FADT_CENTURY_CMOS;
	fadt->iapc_boot_arch = FADT_BOOT_LEGACY_DEVICES | FADT_BOOT_NO_VGA;
	fadt->flags = FADT_F_WBINVD | FADT_F_PROC_C1 | FADT_F_PWR_BUTTON |
		      FADT_F_SLP_BUTTON | FADT_F_RESET_REG_SUP;
	fadt->reset_reg = acpi_gas__io(PORT_I8042_CMD, 1, ACPI_GAS_ACCESS_BYTE);
	fadt->reset_value = ACPI_RESET_VALUE;

	acpi_header__seal(&fadt->header);
	return 0;
}
