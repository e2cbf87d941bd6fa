// SPDX-License-Identifier: GPL-2.0-only
#include <stdlib.h>
#include <string.h>

#include "arch/x86/layout.h"
#include "pvpanic.h"

/*
 * Nothing here changes after create, so concurrent vCPU accesses need no
 * lock: each write only looks at its own data.
 */
struct pvpanic {
	void (*panicked)(void *opaque);
	void *opaque;
};

struct pvpanic *pvpanic__create(void (*panicked)(void *opaque), void *opaque)
{
	struct pvpanic *pv = calloc(1, sizeof(*pv));

	if (!pv)
		return NULL;
	pv->panicked = panicked;
	pv->opaque = opaque;
	return pv;
}

void pvpanic__destroy(struct pvpanic *pv)
{
	free(pv);
}

int pvpanic__attach(struct pvpanic *pv, struct bus *pio)
{
	return bus__register(pio, PORT_PVPANIC, PVPANIC_LEN, &pvpanic__ops, pv);
}

/*
 * Outside the one register reads see all ones, as the bus gives for an
 * unclaimed port; the bus never sends those, but the ops are public.
 */
static void pvpanic_read(void *opaque, uint64_t offset, void *data,
			 unsigned int len)
{
	if (!len || len > 8)
		return;
	if (offset != 0 || len > PVPANIC_LEN) {
		memset(data, 0xff, len);
		return;
	}
	*(uint8_t *)data = PVPANIC_PANICKED | PVPANIC_CRASH_LOADED;
}

static void pvpanic_write(void *opaque, uint64_t offset, const void *data,
			  unsigned int len)
{
	struct pvpanic *pv = opaque;

	if (offset != 0 || len != PVPANIC_LEN)
		return;
	if ((*(const uint8_t *)data & PVPANIC_PANICKED) && pv->panicked)
		pv->panicked(pv->opaque);
}

const struct bus_dev_ops pvpanic__ops = {
	.read = pvpanic_read,
	.write = pvpanic_write,
};
