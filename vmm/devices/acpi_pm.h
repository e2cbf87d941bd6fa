/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The fixed-hardware ACPI power-management registers a non-reduced FADT
 * promises: the PM1a event block (status + enable) and the PM1a control
 * block.  There are no fixed events to raise (no PM timer, no fixed power
 * button), so the only thing the guest does with them that matters is the
 * S5 write that ends in a poweroff.
 */
#ifndef GPIN_ACPI_PM_H
#define GPIN_ACPI_PM_H

#include "arch/x86/layout.h"
#include "bus.h"

/* Block lengths, as the FADT advertises them. */

/* Register offsets inside the event block; both registers are 16 bits. */
#define ACPI_PM1_STS		0
#define ACPI_PM1_EN		2

/* PM1_CNT bits (ACPI 6.3, table 4-16). */
#define ACPI_PM1_CNT_SCI_EN	(1u << 0)
#define ACPI_PM1_CNT_BM_RLD	(1u << 1)
#define ACPI_PM1_CNT_GBL_RLS	(1u << 2)	/* write-only */
#define ACPI_PM1_CNT_SLP_TYP_SHIFT 10
#define ACPI_PM1_CNT_SLP_TYP	(7u << ACPI_PM1_CNT_SLP_TYP_SHIFT)
#define ACPI_PM1_CNT_SLP_EN	(1u << 13)	/* write-only */

/*
 * The SLP_TYP value the DSDT's \_S5 package hands the guest: the DSDT and
 * this device must agree on it, so it lives here, next to the register.
 */
#define ACPI_S5_SLP_TYP		5

struct acpi_pm;

/*
 * @poweroff runs on the vCPU thread that wrote SLP_EN with SLP_TYP = S5,
 * at most once for the device's lifetime.  It must not call back into
 * the device.
 */
struct acpi_pm *acpi_pm__create(void (*poweroff)(void *opaque), void *opaque);
void acpi_pm__destroy(struct acpi_pm *pm);

/*
 * Claims [PORT_ACPI_PM1A_EVT, +ACPI_PM1_EVT_LEN) and
 * [PORT_ACPI_PM1A_CNT, +ACPI_PM1_CNT_LEN) on @pio.  Returns 0 or the
 * -errno of bus__register().
 */
int acpi_pm__attach(struct acpi_pm *pm, struct bus *pio);

/* The two blocks' ops, for a caller or a test that dispatches by hand. */
extern const struct bus_dev_ops acpi_pm__evt_ops;
extern const struct bus_dev_ops acpi_pm__cnt_ops;

#endif /* GPIN_ACPI_PM_H */
