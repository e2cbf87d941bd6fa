/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a virtio device gives a transport, and what it gets back.  The
 * device knows nothing of MMIO or PCI: it describes itself (id, features,
 * queues, config space) and implements struct virtio_dev_ops; the
 * transport owns the register file, feature negotiation, the queues'
 * configuration and the interrupt, and calls the device only with
 * validated state.
 */
#ifndef GPIN_VIRTIO_H
#define GPIN_VIRTIO_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/virtio_config.h>

#include "virtio/virtqueue.h"

struct virtio_dev;

struct virtio_dev_ops {
	/* Reads @len bytes of config space at @offset (already bounded). */
	void (*config_read)(struct virtio_dev *vdev, uint32_t offset,
			    void *data, unsigned int len);
	/*
	 * DRIVER_OK: queues whose ready[] is set hold checked rings.  A
	 * negative return marks the device NEEDS_RESET.
	 */
	int (*activate)(struct virtio_dev *vdev);
	/* The driver notified queue @q (already checked: active and ready). */
	void (*notify)(struct virtio_dev *vdev, unsigned int q);
	/*
	 * Device reset: returns once no request of the device is in flight
	 * any more, so the guest may reuse the rings' memory.
	 */
	void (*reset)(struct virtio_dev *vdev);
};

/* Services of the transport a device calls, from any thread. */
struct virtio_transport_ops {
	/*
	 * Used buffers were added to queue @q: raise its interrupt.  The
	 * device asks only when the driver wants one (virtq__needs_interrupt);
	 * the queue matters to transports with a vector per queue (MSI-X).
	 */
	void (*signal_used)(void *transport, unsigned int q);
	/* The guest broke the protocol: set NEEDS_RESET, tell the driver. */
	void (*needs_reset)(void *transport);
};

struct virtio_dev {
	/* Filled by the device before it is handed to a transport. */
	uint32_t device_id;		/* VIRTIO_ID_* */
	uint64_t features;		/* offered, VIRTIO_F_VERSION_1 included */
	unsigned int num_queues;
	uint16_t queue_max;		/* QueueNumMax, <= VIRTQ_MAX_SIZE */
	uint32_t config_size;
	const struct virtio_dev_ops *ops;
	void *priv;			/* the device's own state */

	/* Filled by the transport. */
	uint64_t driver_features;	/* accepted at FEATURES_OK */
	struct virtq *vqs;		/* num_queues entries */
	bool *ready;			/* num_queues entries */
	const struct virtio_transport_ops *tops;
	void *transport;
};

static inline void virtio_dev__signal_used(struct virtio_dev *vdev,
					   unsigned int q)
{
	vdev->tops->signal_used(vdev->transport, q);
}

static inline void virtio_dev__needs_reset(struct virtio_dev *vdev)
{
	vdev->tops->needs_reset(vdev->transport);
}

static inline bool virtio_dev__has(const struct virtio_dev *vdev,
				   unsigned int bit)
{
	return vdev->driver_features & (1ULL << bit);
}

/* Sets the low or high half of a 64-bit register the driver writes. */
static inline void virtio__set_half(uint64_t *v, bool high, uint32_t val)
{
	if (high)
		*v = (*v & 0xffffffffULL) | (uint64_t)val << 32;
	else
		*v = (*v & ~0xffffffffULL) | val;
}

/* A queue's configuration as the driver writes it, before enabling it. */
struct virtq_cfg {
	uint16_t num;
	uint64_t desc;
	uint64_t avail;
	uint64_t used;
};

/* What a transport does after a register write (virtio/regs.h). */
enum virtio_status_action {
	VIRTIO_STATUS_DONE,	/* the write took effect (or was ignored) */
	VIRTIO_STATUS_RESET,	/* 0 was written to the status: reset */
	VIRTIO_STATUS_BROKEN,	/* protocol broken: set NEEDS_RESET */
};

#endif /* GPIN_VIRTIO_H */
