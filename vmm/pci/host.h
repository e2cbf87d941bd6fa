/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * PCI bus 0 behind a host bridge with configuration mechanism #1: the
 * guest writes a dword address (enable bit 31, bus, device, function,
 * register) to port 0xcf8 and accesses the selected dword through ports
 * 0xcfc-0xcff with byte, word or dword accesses inside it.  The bridge
 * itself is function 00:00.0 (class "host bridge", which Linux's conf1
 * sanity check looks for); each device added is single-function device
 * 1, 2, ...  Absent functions, other buses, the AMD extended-register
 * bits and accesses that straddle a dword read all ones and ignore
 * writes, as on a bus where nothing answers.
 *
 * Enumeration needs no firmware: Linux finds the bridge from the DSDT's
 * PCI0 (arch/x86/acpi.c) and probes bus 0 through these ports.
 */
#ifndef GPIN_PCI_HOST_H
#define GPIN_PCI_HOST_H

#include "bus.h"
#include "pci/pci.h"

#define PCI_HOST_SLOTS		32
#define PCI_CONF1_ENABLE	0x80000000u

struct pci_host;

struct pci_host *pci_host__create(void);
void pci_host__destroy(struct pci_host *h);

/*
 * Puts @f (the caller's, it must outlive @h) in the next free slot;
 * returns the device number or -ENOSPC.  Only before the vCPUs run.
 */
int pci_host__add(struct pci_host *h, struct pci_func *f);

/* Claims the configuration ports on @pio. */
int pci_host__attach(struct pci_host *h, struct bus *pio);

/* Port I/O at PORT_PCI_CONF1 + offset; the opaque is the host. */
extern const struct bus_dev_ops pci_host__conf1_ops;

#endif /* GPIN_PCI_HOST_H */
