/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * An address-space bus (one for port I/O, one for MMIO): devices claim
 * [base, base + len) and get their accesses through an ops table.
 */
#ifndef GPIN_BUS_H
#define GPIN_BUS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define BUS_MAX_DEVS	64

struct bus_dev_ops {
	/* @offset is relative to the device's base; @len is 1, 2, 4 or 8. */
	void (*read)(void *opaque, uint64_t offset, void *data, unsigned int len);
	void (*write)(void *opaque, uint64_t offset, const void *data,
		      unsigned int len);
};

struct bus_dev {
	uint64_t base;
	uint64_t len;
	const struct bus_dev_ops *ops;
	void *opaque;
};

struct bus {
	const char *name;
	struct bus_dev devs[BUS_MAX_DEVS];
	unsigned int ndevs;
};

void bus__init(struct bus *bus, const char *name);
/* Returns 0, -EEXIST when the range overlaps a device, -ENOSPC when full. */
int bus__register(struct bus *bus, uint64_t base, uint64_t len,
		  const struct bus_dev_ops *ops, void *opaque);
/*
 * Dispatches one access.  Returns false when no device claims it: reads
 * then see all ones, as on a real bus with nothing behind the address.
 */
bool bus__access(struct bus *bus, uint64_t addr, void *data, unsigned int len,
		 bool is_write);

#endif /* GPIN_BUS_H */
