// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>

#include "bus.h"

void bus__init(struct bus *bus, const char *name)
{
	memset(bus, 0, sizeof(*bus));
	bus->name = name;
}

static bool ranges_overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

int bus__register(struct bus *bus, uint64_t base, uint64_t len,
		  const struct bus_dev_ops *ops, void *opaque)
{
	unsigned int i;

	if (!len || base + len < base)
		return -EINVAL;
	for (i = 0; i < bus->ndevs; i++)
		if (ranges_overlap(base, len, bus->devs[i].base, bus->devs[i].len))
			return -EEXIST;
	if (bus->ndevs == BUS_MAX_DEVS)
		return -ENOSPC;
	bus->devs[bus->ndevs++] = (struct bus_dev) {
		.base = base, .len = len, .ops = ops, .opaque = opaque,
	};
	return 0;
}

/*
 * The device table is written only before the vCPUs start, so lookups
 * need no lock; each device serialises its own state.
 */
static struct bus_dev *bus__find(struct bus *bus, uint64_t addr, unsigned int len)
{
	unsigned int i;

	for (i = 0; i < bus->ndevs; i++) {
		struct bus_dev *dev = &bus->devs[i];

		if (addr >= dev->base && addr - dev->base < dev->len &&
		    len <= dev->len - (addr - dev->base))
			return dev;
	}
	return NULL;
}

bool bus__access(struct bus *bus, uint64_t addr, void *data, unsigned int len,
		 bool is_write)
{
	struct bus_dev *dev = bus__find(bus, addr, len);

	if (!dev) {
		if (!is_write)
			memset(data, 0xff, len);
		return false;
	}
	if (is_write) {
		if (dev->ops->write)
			dev->ops->write(dev->opaque, addr - dev->base, data, len);
	} else if (dev->ops->read) {
		dev->ops->read(dev->opaque, addr - dev->base, data, len);
	} else {
		memset(data, 0xff, len);
	}
	return true;
}
