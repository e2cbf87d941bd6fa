/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The register file every virtio transport has, and its rules: feature
 * selection and negotiation, queue selection and configuration, queue
 * enable, the device-status state machine (sections 2.1, 3.1.1), and
 * NEEDS_RESET.  virtio-mmio and virtio-pci lay these fields out
 * differently (a 0x100-byte register window; the common configuration
 * structure in a BAR) and each maps its offsets onto enum virtio_reg;
 * what a read returns and what a write does is decided here, once.
 *
 * The transport owns the lock (every call but virtio_regs__broken() and
 * virtio_regs__break() is made holding it), the interrupt, and what only
 * it has (mmio's interrupt status, pci's MSI-X vectors and ISR).
 */
#ifndef GPIN_VIRTIO_REGS_H
#define GPIN_VIRTIO_REGS_H

#include <stdbool.h>
#include <stdint.h>

#include "virtio/virtio.h"

enum virtio_reg {
	VREG_DEV_FEATURES_SEL,
	VREG_DEV_FEATURES,
	VREG_DRV_FEATURES_SEL,
	VREG_DRV_FEATURES,
	VREG_NUM_QUEUES,
	VREG_STATUS,
	VREG_CONFIG_GENERATION,
	VREG_QUEUE_SEL,
	VREG_QUEUE_NUM_MAX,
	VREG_QUEUE_NUM,
	VREG_QUEUE_READY,
	VREG_QUEUE_DESC_LO,
	VREG_QUEUE_DESC_HI,
	VREG_QUEUE_AVAIL_LO,
	VREG_QUEUE_AVAIL_HI,
	VREG_QUEUE_USED_LO,
	VREG_QUEUE_USED_HI,
};

/* One register at a transport's offset: its layout, as a table. */
struct virtio_reg_at {
	uint16_t off;
	enum virtio_reg reg;
};

/* The register at @off in @map (@n entries): 0, or -1 when none is. */
int virtio_regs__find(const struct virtio_reg_at *map, unsigned int n,
		      uint64_t off, enum virtio_reg *reg);

/* Where the transports differ in what the registers mean. */
struct virtio_regs_rules {
	/* a queue's size after a reset: mmio 0, pci the maximum (4.1.4.3.1) */
	bool num_starts_at_max;
	/* writing 0 to QueueReady disables the queue (mmio; not pci) */
	bool ready_zero_disables;
};

struct virtio_regs {
	struct virtio_dev *vdev;
	struct virtq_mem mem;
	struct virtio_regs_rules rules;
	uint32_t status;
	uint32_t dev_features_sel;
	uint32_t drv_features_sel;
	uint32_t queue_sel;
	uint64_t drv_features;
	struct virtq_cfg *queues;	/* as the driver configures them */
	struct virtq *vqs;		/* vdev->vqs */
	bool *ready;			/* vdev->ready */
	bool broken;			/* NEEDS_RESET, atomic */
};

/*
 * Hands @vdev its queue arrays (vdev->vqs, vdev->ready), registers as
 * after a reset.  0 or -ENOMEM.
 */
int virtio_regs__init(struct virtio_regs *r, struct virtio_dev *vdev,
		      const struct virtq_mem *mem,
		      const struct virtio_regs_rules *rules);
void virtio_regs__exit(struct virtio_regs *r);

/* The registers as after a reset; the device's own reset is the caller's. */
void virtio_regs__reset(struct virtio_regs *r);

uint32_t virtio_regs__read(const struct virtio_regs *r, enum virtio_reg reg);

/*
 * The driver wrote @val to @reg.  VIRTIO_STATUS_RESET: the transport
 * resets the device and then the registers; VIRTIO_STATUS_BROKEN: it
 * marks the device NEEDS_RESET (virtio_regs__break()).
 */
enum virtio_status_action virtio_regs__write(struct virtio_regs *r,
					     enum virtio_reg reg,
					     uint32_t val);

/* The queue the driver selected, or NULL past the last. */
struct virtq_cfg *virtio_regs__selected(const struct virtio_regs *r);

/* Whether a notification of queue @q reaches the device. */
bool virtio_regs__notifiable(const struct virtio_regs *r, uint64_t q);

/* Any thread, no lock. */
static inline bool virtio_regs__broken(const struct virtio_regs *r)
{
	return __atomic_load_n(&r->broken, __ATOMIC_ACQUIRE);
}

/* Sets NEEDS_RESET; true when it was not set (the driver is to be told). */
static inline bool virtio_regs__break(struct virtio_regs *r)
{
	return !__atomic_exchange_n(&r->broken, true, __ATOMIC_ACQ_REL);
}

#endif /* GPIN_VIRTIO_REGS_H */
