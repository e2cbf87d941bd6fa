/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The virtio-mmio transport, version 2 (virtio 1.x "modern" only; section
 * 4.2 of the specification).  One register window per device, one
 * level-triggered interrupt line.  The guest learns of the device from
 * the DSDT (arch/x86/acpi.c: _HID "LNRO0005", which Linux's virtio_mmio
 * driver binds), since Debian kernels cannot take virtio_mmio.device=.
 *
 * The register write is the transport's choke point: queue sizes and ring
 * addresses are checked (virtq__init) when the driver sets QueueReady,
 * features when it sets FEATURES_OK, the whole setup again at DRIVER_OK;
 * accesses at unknown offsets or of the wrong width are ignored (reads
 * return 0); a guest that breaks the protocol gets NEEDS_RESET and a
 * configuration-change interrupt, never a dead VMM.
 */
#ifndef GPIN_VIRTIO_MMIO_H
#define GPIN_VIRTIO_MMIO_H

#include <stdint.h>

#include <linux/virtio_mmio.h>

#include "bus.h"
#include "virtio/virtio.h"

/* The register window the guest is told about (registers + config). */
#define VIRTIO_MMIO_WINDOW	0x200
#define VIRTIO_MMIO_CONFIG_OFF	0x100
#define VIRTIO_MMIO_MAGIC	0x74726976	/* "virt" */
#define VIRTIO_MMIO_VENDOR	0x4e495047	/* "GPIN" */

/* Drives interrupt line @gsi to @level (vm_guest__set_irq in the VMM). */
typedef void (*virtio_irq_fn)(void *opaque, unsigned int gsi, int level);

struct virtio_mmio;

/*
 * @vdev stays the caller's; @mem translates the guest's ring addresses.
 * NULL on allocation failure or a device that describes itself wrongly
 * (no queues, queue_max not a power of two up to VIRTQ_MAX_SIZE, no
 * VIRTIO_F_VERSION_1).
 */
struct virtio_mmio *virtio_mmio__create(struct virtio_dev *vdev,
					const struct virtq_mem *mem,
					uint64_t base, unsigned int gsi,
					virtio_irq_fn irq, void *irq_opaque);
/* Resets the device (waits for its requests in flight), then frees. */
void virtio_mmio__destroy(struct virtio_mmio *m);
/* Claims [base, base + VIRTIO_MMIO_WINDOW) on @mmio. */
int virtio_mmio__attach(struct virtio_mmio *m, struct bus *mmio);

uint64_t virtio_mmio__base(const struct virtio_mmio *m);
unsigned int virtio_mmio__gsi(const struct virtio_mmio *m);

extern const struct bus_dev_ops virtio_mmio__ops;

#endif /* GPIN_VIRTIO_MMIO_H */
