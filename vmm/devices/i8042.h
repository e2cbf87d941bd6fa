/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef GPIN_I8042_H
#define GPIN_I8042_H

#include "bus.h"

/*
 * Just enough of the PC keyboard controller for its one job here: the
 * guest resets the machine by writing 0xfe (pulse reset line) to port
 * 0x64, which is how Linux reboots (reboot=k, or the ACPI reset register
 * pointing at this port).
 */
struct i8042 {
	void (*reset)(void *opaque);
	void *opaque;
};

int i8042__attach(struct i8042 *kbd, struct bus *pio);

#endif /* GPIN_I8042_H */
