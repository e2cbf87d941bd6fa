/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * QEMU's pvpanic ISA device: one I/O port through which the guest tells
 * the host it has panicked.  Linux binds its pvpanic-mmio driver to the
 * "QEMU0001" device the DSDT describes (an I/O resource works as well as
 * a memory one), reads the port to learn which events the host wants and
 * writes an event from its panic notifier.
 */
#ifndef GPIN_PVPANIC_H
#define GPIN_PVPANIC_H

#include "arch/x86/layout.h"
#include "bus.h"


/* Event bits, in the port's read value (supported) and writes (raised). */
#define PVPANIC_PANICKED	(1u << 0)
#define PVPANIC_CRASH_LOADED	(1u << 1)

struct pvpanic;

/*
 * @panicked runs on the vCPU thread that raised PVPANIC_PANICKED, once
 * per such write.  CRASH_LOADED alone does not call it: the guest sends
 * that instead when a kdump kernel is about to take over, and the VM
 * should keep running for it.
 */
struct pvpanic *pvpanic__create(void (*panicked)(void *opaque), void *opaque);
void pvpanic__destroy(struct pvpanic *pv);

/* Claims PORT_PVPANIC on @pio; returns 0 or bus__register()'s -errno. */
int pvpanic__attach(struct pvpanic *pv, struct bus *pio);

extern const struct bus_dev_ops pvpanic__ops;

#endif /* GPIN_PVPANIC_H */
