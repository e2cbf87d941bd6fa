/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * MSI-X for one PCI function (PCI Local Bus 3.0, section 6.8.2): the
 * capability in config space, the vector table and the pending-bit array
 * (PBA) in a memory BAR, and the delivery of a vector's message.
 *
 * A vector is delivered only when MSI-X is enabled, the function is not
 * masked, the entry is not masked and its address is in the local APICs'
 * window (0xfee00000-0xfeefffff, what an x86 MSI is): a device would
 * write any other address as DMA into guest memory, which this one does
 * not do, so such a message is dropped.  A masked vector sets its pending
 * bit instead and is delivered when unmasked.  With MSI-X disabled
 * nothing is sent and nothing pends: the function has no INTx pin to
 * fall back on, and a driver enables MSI-X before it starts the device.
 * Vector numbers come from the transport, which the guest programs: any
 * number >= the table size (VIRTIO_MSI_NO_VECTOR among them) means "no
 * interrupt".
 *
 * Table accesses must be dword or qword sized and aligned (6.8.2.7);
 * others, and any outside the table or PBA, read 0 and are ignored.
 * Only an entry's vector-control mask bit is writable of its control
 * word; the PBA is read-only.
 */
#ifndef GPIN_PCI_MSIX_H
#define GPIN_PCI_MSIX_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "pci/pci.h"

#define MSIX_ENTRY_SIZE		16
#define MSIX_MAX_VECTORS	2048
#define MSIX_CAP_LEN		12

/* Sends message @data to @addr (KVM_SIGNAL_MSI in the VMM). */
typedef void (*msix_send_fn)(void *opaque, uint64_t addr, uint32_t data);

struct msix_entry {
	uint32_t addr_lo;
	uint32_t addr_hi;
	uint32_t data;
	uint32_t ctrl;
};

struct msix {
	pthread_mutex_t lock;	/* the table, the PBA and the two flags */
	unsigned int nvec;
	struct msix_entry *table;
	uint64_t *pba;
	bool enabled;		/* message control: MSI-X Enable */
	bool masked;		/* message control: Function Mask */
	unsigned int cap;	/* the capability's offset in config space */
	msix_send_fn send;
	void *opaque;
};

/* Bytes of the table and of the PBA (whole qwords) for @nvec vectors. */
uint32_t msix__table_bytes(unsigned int nvec);
uint32_t msix__pba_bytes(unsigned int nvec);

/*
 * @nvec vectors (1..MSIX_MAX_VECTORS), all masked, MSI-X disabled.
 * 0, -EINVAL or -ENOMEM.
 */
int msix__init(struct msix *m, unsigned int nvec, msix_send_fn send,
	       void *opaque);
void msix__exit(struct msix *m);

/*
 * Adds the capability to @f: table at @table_off and PBA at @pba_off of
 * BAR @bar (both qword-aligned).  0 or -ENOSPC.
 */
int msix__add_cap(struct msix *m, struct pci_func *f, unsigned int bar,
		  uint32_t table_off, uint32_t pba_off);
/*
 * The function's owner calls it after every config write: picks up the
 * Enable and Function Mask bits and delivers what they unmasked.
 */
void msix__cfg_written(struct msix *m, const struct pci_func *f);

/* BAR accesses, @off relative to the table or the PBA. */
void msix__table_read(struct msix *m, uint64_t off, void *data,
		      unsigned int len);
void msix__table_write(struct msix *m, uint64_t off, const void *data,
		       unsigned int len);
void msix__pba_read(struct msix *m, uint64_t off, void *data,
		    unsigned int len);

/* Raises @vector: delivers it, or marks it pending while masked. */
void msix__notify(struct msix *m, unsigned int vector);

#endif /* GPIN_PCI_MSIX_H */
