// SPDX-License-Identifier: GPL-2.0-only
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/layout.h"
#include "acpi_pm.h"

/* The bits of PM1_CNT that read back what was written. */
#define PM1_CNT_RW_BITS		(ACPI_PM1_CNT_BM_RLD | ACPI_PM1_CNT_SLP_TYP)

struct acpi_pm {
	/* vCPU threads reach the registers concurrently. */
	pthread_mutex_t lock;
	uint16_t sts;
	uint16_t en;
	uint16_t cnt;		/* PM1_CNT_RW_BITS only */
	/* S5 is one-way: a second request must not stop the VM twice. */
	bool off_requested;

	void (*poweroff)(void *opaque);
	void *opaque;
};

/*
 * Both blocks are arrays of 16-bit registers.  Linux accesses each
 * register with its own 16-bit access, but a guest may use any width at
 * any offset inside the block (a byte write to the high half of PM1_CNT
 * is a legal way to set SLP_EN), so accesses are split per register and
 * a write carries the mask of the bytes it covers.
 */
struct pm_block {
	unsigned int len;
	uint16_t (*read)(struct acpi_pm *pm, unsigned int reg);
	/* Returns true when the write asks for a poweroff. */
	bool (*write)(struct acpi_pm *pm, unsigned int reg, uint16_t val,
		      uint16_t mask);
};

struct acpi_pm *acpi_pm__create(void (*poweroff)(void *opaque), void *opaque)
{
	struct acpi_pm *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	pthread_mutex_init(&pm->lock, NULL);
	pm->poweroff = poweroff;
	pm->opaque = opaque;
	return pm;
}

void acpi_pm__destroy(struct acpi_pm *pm)
{
	if (!pm)
		return;
	pthread_mutex_destroy(&pm->lock);
	free(pm);
}

int acpi_pm__attach(struct acpi_pm *pm, struct bus *pio)
{
	int ret;

	ret = bus__register(pio, PORT_ACPI_PM1A_EVT, ACPI_PM1_EVT_LEN,
			    &acpi_pm__evt_ops, pm);
	if (ret)
		return ret;
	/* The bus has no unregister: the caller tears the whole bus down. */
	return bus__register(pio, PORT_ACPI_PM1A_CNT, ACPI_PM1_CNT_LEN,
			     &acpi_pm__cnt_ops, pm);
}

static uint16_t pm1_evt_read(struct acpi_pm *pm, unsigned int reg)
{
	return reg == ACPI_PM1_STS / 2 ? pm->sts : pm->en;
}

static bool pm1_evt_write(struct acpi_pm *pm, unsigned int reg, uint16_t val,
			  uint16_t mask)
{
	if (reg == ACPI_PM1_STS / 2)
		pm->sts &= ~(val & mask);	/* write 1 to clear */
	else
		pm->en = (pm->en & ~mask) | (val & mask);
	return false;
}

/*
 * SCI_EN always reads 1: with SMI_CMD = 0 the FADT says the machine is
 * in ACPI mode from power-on and there is no SMI handler to leave it, so
 * a write clearing SCI_EN changes nothing.
 */
static uint16_t pm1_cnt_read(struct acpi_pm *pm, unsigned int reg)
{
	return pm->cnt | ACPI_PM1_CNT_SCI_EN;
}

/*
 * Linux enters S5 with two writes (acpi_hw_legacy_sleep): SLP_TYP alone,
 * then SLP_TYP | SLP_EN.  Only the second one acts.  Other sleep types
 * are ignored: the DSDT offers none, and we could not resume from them.
 */
static bool pm1_cnt_write(struct acpi_pm *pm, unsigned int reg, uint16_t val,
			  uint16_t mask)
{
	uint16_t cnt = (pm1_cnt_read(pm, reg) & ~mask) | (val & mask);
	unsigned int slp_typ;

	pm->cnt = cnt & PM1_CNT_RW_BITS;
	if (!(cnt & ACPI_PM1_CNT_SLP_EN))
		return false;
	slp_typ = (cnt & ACPI_PM1_CNT_SLP_TYP) >> ACPI_PM1_CNT_SLP_TYP_SHIFT;
	if (slp_typ != ACPI_S5_SLP_TYP || pm->off_requested)
		return false;
	pm->off_requested = true;
	return true;
}

static const struct pm_block pm1_evt_block = {
	.len = ACPI_PM1_EVT_LEN,
	.read = pm1_evt_read,
	.write = pm1_evt_write,
};

static const struct pm_block pm1_cnt_block = {
	.len = ACPI_PM1_CNT_LEN,
	.read = pm1_cnt_read,
	.write = pm1_cnt_write,
};

/*
 * The bus only passes accesses that fit the block, but the ops are public
 * and a test (or a future bus) may call them with anything.
 */
static bool pm_access_ok(const struct pm_block *blk, uint64_t offset,
			 unsigned int len)
{
	return len && offset < blk->len && len <= blk->len - offset;
}

static void pm_block_read(const struct pm_block *blk, struct acpi_pm *pm,
			  uint64_t offset, void *data, unsigned int len)
{
	uint8_t *bytes = data;
	unsigned int i;

	if (!len || len > 8)
		return;
	if (!pm_access_ok(blk, offset, len)) {
		memset(data, 0xff, len);
		return;
	}
	pthread_mutex_lock(&pm->lock);
	for (i = 0; i < len; i++) {
		unsigned int byte = offset + i;

		bytes[i] = blk->read(pm, byte / 2) >> (byte % 2 * 8);
	}
	pthread_mutex_unlock(&pm->lock);
}

static void pm_block_write(const struct pm_block *blk, struct acpi_pm *pm,
			   uint64_t offset, const void *data, unsigned int len)
{
	const uint8_t *bytes = data;
	bool poweroff = false;
	unsigned int i = 0;

	if (!pm_access_ok(blk, offset, len))
		return;
	pthread_mutex_lock(&pm->lock);
	while (i < len) {
		unsigned int reg = (offset + i) / 2;
		uint16_t val = 0, mask = 0;

		/* Gather the bytes of this access that land in @reg. */
		for (; i < len && (offset + i) / 2 == reg; i++) {
			unsigned int shift = (offset + i) % 2 * 8;

			val |= (uint16_t)(bytes[i] << shift);
			mask |= (uint16_t)(0xff << shift);
		}
		poweroff |= blk->write(pm, reg, val, mask);
	}
	pthread_mutex_unlock(&pm->lock);

	/* Outside the lock: the callback stops the VM and may take its locks. */
	if (poweroff && pm->poweroff)
		pm->poweroff(pm->opaque);
}

static void acpi_pm_evt_read(void *opaque, uint64_t offset, void *data,
			     unsigned int len)
{
	pm_block_read(&pm1_evt_block, opaque, offset, data, len);
}

static void acpi_pm_evt_write(void *opaque, uint64_t offset, const void *data,
			      unsigned int len)
{
	pm_block_write(&pm1_evt_block, opaque, offset, data, len);
}

static void acpi_pm_cnt_read(void *opaque, uint64_t offset, void *data,
			     unsigned int len)
{
	pm_block_read(&pm1_cnt_block, opaque, offset, data, len);
}

static void acpi_pm_cnt_write(void *opaque, uint64_t offset, const void *data,
			      unsigned int len)
{
	pm_block_write(&pm1_cnt_block, opaque, offset, data, len);
}

const struct bus_dev_ops acpi_pm__evt_ops = {
	.read = acpi_pm_evt_read,
	.write = acpi_pm_evt_write,
};

const struct bus_dev_ops acpi_pm__cnt_ops = {
	.read = acpi_pm_cnt_read,
	.write = acpi_pm_cnt_write,
};
