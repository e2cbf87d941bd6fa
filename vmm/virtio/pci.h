/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The virtio-pci transport, modern only (virtio 1.x, section 4.1): a PCI
 * function with vendor 0x1af4, device 0x1040 + the virtio device id,
 * revision 1, and one 32-bit memory BAR holding, each on its own page,
 *   0x0000 common configuration    (VIRTIO_PCI_CAP_COMMON_CFG)
 *   0x1000 ISR status, 1 byte       (VIRTIO_PCI_CAP_ISR_CFG)
 *   0x2000 device configuration     (VIRTIO_PCI_CAP_DEVICE_CFG)
 *   0x3000 queue notify, 4 bytes a queue (VIRTIO_PCI_CAP_NOTIFY_CFG)
 *   0x4000 MSI-X table, 0x5000 MSI-X PBA
 * Interrupts are MSI-X only, one vector per queue and one for
 * configuration changes: no INTx pin, so the driver never reads ISR or
 * acknowledges anything on the interrupt path.  The VIRTIO_PCI_CAP_PCI_CFG
 * window is not offered (the specification makes it mandatory for
 * drivers that cannot map BARs; Linux does not use it).  Bus mastering
 * is not modelled: the rings and MSI-X work whatever the command
 * register's Bus Master bit says (Linux sets it before it starts).
 *
 * The common-configuration write is the choke point, as in mmio.c: each
 * field is accessed only at its own width (64-bit fields also as two
 * dwords), queue sizes and ring addresses are checked (virtq__init) when
 * the driver sets queue_enable, features at FEATURES_OK, MSI-X vectors
 * when written (one the table does not hold reads back as
 * VIRTIO_MSI_NO_VECTOR, which tells the driver the mapping failed); a
 * guest that breaks the protocol gets NEEDS_RESET, never a dead VMM.
 */
#ifndef GPIN_VIRTIO_PCI_H
#define GPIN_VIRTIO_PCI_H

#include <stdint.h>

#include <linux/virtio_pci.h>

#include "bus.h"
#include "pci/msix.h"
#include "pci/pci.h"
#include "virtio/virtio.h"

#define VIRTIO_PCI_VENDOR		0x1af4
#define VIRTIO_PCI_DEVICE_BASE		0x1040	/* + VIRTIO_ID_* */
#define VIRTIO_PCI_BAR			0
#define VIRTIO_PCI_BAR_SIZE		0x8000
#define VIRTIO_PCI_COMMON_OFF		0x0000
#define VIRTIO_PCI_COMMON_LEN		0x38	/* up to queue_device */
#define VIRTIO_PCI_ISR_OFF		0x1000
#define VIRTIO_PCI_DEVICE_OFF		0x2000
#define VIRTIO_PCI_NOTIFY_OFF		0x3000
#define VIRTIO_PCI_NOTIFY_MULT		4
#define VIRTIO_PCI_MSIX_TABLE_OFF	0x4000
#define VIRTIO_PCI_MSIX_PBA_OFF		0x5000
#define VIRTIO_PCI_REGION_SIZE		0x1000

struct virtio_pci;

/*
 * @vdev stays the caller's; @mem translates ring addresses; the BAR is
 * at @bar_addr (aligned to VIRTIO_PCI_BAR_SIZE); @send delivers MSI-X
 * messages.  NULL on allocation failure or a device that describes
 * itself wrongly (as virtio_mmio__create(), or too many queues or too
 * much config space for the BAR's regions).
 */
struct virtio_pci *virtio_pci__create(struct virtio_dev *vdev,
				      const struct virtq_mem *mem,
				      uint32_t bar_addr, msix_send_fn send,
				      void *send_opaque);
/* Resets the device (waits for its requests in flight), then frees. */
void virtio_pci__destroy(struct virtio_pci *p);

/* The function to put on a host bridge (pci_host__add). */
struct pci_func *virtio_pci__func(struct virtio_pci *p);
/* Claims the BAR's range on @mmio. */
int virtio_pci__attach(struct virtio_pci *p, struct bus *mmio);
/* Guest-physical address of queue @q's notify register (ioeventfds). */
uint64_t virtio_pci__notify_addr(const struct virtio_pci *p, unsigned int q);

/* BAR accesses, relative to the BAR; the opaque is the transport. */
extern const struct bus_dev_ops virtio_pci__bar_ops;

#endif /* GPIN_VIRTIO_PCI_H */
