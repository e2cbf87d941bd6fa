/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading a running VM's counters without knowing its devices: whoever
 * holds them calls a counter_fn once per counter, so the API's
 * vm.counters (api/request.c) builds its JSON from names and values and
 * never looks inside a device.
 */
#ifndef GPIN_COUNTERS_H
#define GPIN_COUNTERS_H

#include <stdint.h>

/*
 * One counter: @dev names its device ("blk0-q0", a disk's queue), @name
 * the counter ("requests").  Both strings live only for the call.
 */
typedef void (*counter_fn)(void *opaque, const char *dev, const char *name,
			   uint64_t value);

#endif /* GPIN_COUNTERS_H */
