// SPDX-License-Identifier: GPL-2.0-only
/*
 * What every transport does the same: the device-status state machine
 * (sections 2.1 and 3.1.1) and the check of an enabled queue.  The
 * transport owns the registers and their lock; this decides what a write
 * means.
 */
#include "virtio/virtio.h"

/*
 * DRIVER_OK: the features are final (FEATURES_OK is set and freezes them)
 * and so are the rings, so this is where the queues learn of EVENT_IDX,
 * not at queue enable, which a careless driver may do before FEATURES_OK.
 * Nothing touches the rings before activate().
 */
static void queues_start(struct virtio_dev *vdev)
{
	bool event_idx = virtio_dev__has(vdev, VIRTIO_RING_F_EVENT_IDX);
	unsigned int i;

	for (i = 0; i < vdev->num_queues; i++)
		if (vdev->ready[i])
			virtq__set_event_idx(&vdev->vqs[i], event_idx);
}

/*
 * FEATURES_OK: only features we offered, and always VERSION_1 (these are
 * modern-only devices).  Refusing means leaving the bit clear, which the
 * driver reads back (section 3.1.1).
 */
static bool features_ok(struct virtio_dev *vdev, uint64_t f)
{
	if (f & ~vdev->features)
		return false;
	if (!(f & (1ULL << VIRTIO_F_VERSION_1)))
		return false;
	vdev->driver_features = f;
	return true;
}

enum virtio_status_action virtio__status_write(struct virtio_dev *vdev,
					       uint32_t *status, uint32_t val,
					       uint64_t drv_features)
{
	uint32_t old = *status, set;

	if (!val)
		return VIRTIO_STATUS_RESET;
	/* NEEDS_RESET is ours to set, not the driver's. */
	val &= ~VIRTIO_CONFIG_S_NEEDS_RESET;
	if (old & ~val)
		return VIRTIO_STATUS_DONE;	/* only a reset clears bits */
	set = val & ~old;
	if ((set & VIRTIO_CONFIG_S_FEATURES_OK) &&
	    !features_ok(vdev, drv_features))
		val &= ~VIRTIO_CONFIG_S_FEATURES_OK;
	if (set & VIRTIO_CONFIG_S_DRIVER_OK) {
		if (!(val & VIRTIO_CONFIG_S_FEATURES_OK))
			return VIRTIO_STATUS_BROKEN;
		*status = val;
		queues_start(vdev);
		if (vdev->ops->activate(vdev) < 0)
			return VIRTIO_STATUS_BROKEN;
		return VIRTIO_STATUS_DONE;
	}
	*status = val;
	return VIRTIO_STATUS_DONE;
}

bool virtio__queue_enable(struct virtio_dev *vdev, unsigned int i,
			  const struct virtq_mem *mem,
			  const struct virtq_cfg *cfg)
{
	if (cfg->num > vdev->queue_max ||
	    virtq__init(&vdev->vqs[i], mem, cfg->num, cfg->desc, cfg->avail,
			cfg->used))
		return false;
	vdev->ready[i] = true;
	return true;
}
