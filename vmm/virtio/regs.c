// SPDX-License-Identifier: GPL-2.0-only
/*
 * The register file every transport has (virtio/regs.h): what a read
 * returns and what a write does, the device-status state machine
 * (sections 2.1 and 3.1.1) and the check of an enabled queue.  The
 * transport owns the lock and maps its offsets onto enum virtio_reg.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "virtio/regs.h"

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

/*
 * The driver wrote @val to the status register @status, having written
 * @drv_features as its features.  Checks the features at FEATURES_OK
 * (refused: the bit stays clear), and at DRIVER_OK turns on EVENT_IDX in
 * the ready queues and activates the device.
 */
static enum virtio_status_action status_write(struct virtio_dev *vdev,
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

/*
 * The driver enabled queue @i configured as @cfg: the one check of a
 * queue's configuration (size within queue_max, rings that virtq__init
 * accepts in @mem).  Returns false when the device needs a reset.
 */
static bool queue_enable(struct virtio_dev *vdev, unsigned int i,
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

int virtio_regs__init(struct virtio_regs *r, struct virtio_dev *vdev,
		      const struct virtq_mem *mem,
		      const struct virtio_regs_rules *rules)
{
	unsigned int n = vdev->num_queues;

	*r = (struct virtio_regs) {
		.vdev = vdev,
		.mem = *mem,
		.rules = *rules,
		.queues = calloc(n, sizeof(*r->queues)),
		.vqs = calloc(n, sizeof(*r->vqs)),
		.ready = calloc(n, sizeof(*r->ready)),
	};
	if (!r->queues || !r->vqs || !r->ready) {
		virtio_regs__exit(r);
		return -ENOMEM;
	}
	vdev->vqs = r->vqs;
	vdev->ready = r->ready;
	virtio_regs__reset(r);
	return 0;
}

void virtio_regs__exit(struct virtio_regs *r)
{
	if (r->vdev && r->vdev->vqs == r->vqs) {
		r->vdev->vqs = NULL;
		r->vdev->ready = NULL;
	}
	free(r->queues);
	free(r->vqs);
	free(r->ready);
	r->queues = NULL;
	r->vqs = NULL;
	r->ready = NULL;
}

void virtio_regs__reset(struct virtio_regs *r)
{
	struct virtio_dev *vdev = r->vdev;
	unsigned int i, n = vdev->num_queues;

	memset(r->vqs, 0, n * sizeof(*r->vqs));
	memset(r->ready, 0, n * sizeof(*r->ready));
	for (i = 0; i < n; i++)
		r->queues[i] = (struct virtq_cfg) {
			.num = r->rules.num_starts_at_max ? vdev->queue_max : 0,
		};
	r->status = 0;
	r->dev_features_sel = r->drv_features_sel = r->queue_sel = 0;
	r->drv_features = 0;
	vdev->driver_features = 0;
	__atomic_store_n(&r->broken, false, __ATOMIC_RELEASE);
}

struct virtq_cfg *virtio_regs__selected(const struct virtio_regs *r)
{
	if (r->queue_sel >= r->vdev->num_queues)
		return NULL;
	return &r->queues[r->queue_sel];
}

/* The half of a 64-bit feature word a selector names; 0 past bit 63. */
static uint32_t features_half(uint64_t f, uint32_t sel)
{
	return sel > 1 ? 0 : (uint32_t)(f >> (32 * sel));
}

static uint32_t queue_read(const struct virtio_regs *r,
			   const struct virtq_cfg *q, enum virtio_reg reg)
{
	switch (reg) {
	case VREG_QUEUE_NUM_MAX:
		return r->vdev->queue_max;
	case VREG_QUEUE_NUM:
		return q->num;
	case VREG_QUEUE_READY:
		return r->ready[r->queue_sel];
	case VREG_QUEUE_DESC_LO:
		return (uint32_t)q->desc;
	case VREG_QUEUE_DESC_HI:
		return q->desc >> 32;
	case VREG_QUEUE_AVAIL_LO:
		return (uint32_t)q->avail;
	case VREG_QUEUE_AVAIL_HI:
		return q->avail >> 32;
	case VREG_QUEUE_USED_LO:
		return (uint32_t)q->used;
	case VREG_QUEUE_USED_HI:
		return q->used >> 32;
	default:
		return 0;
	}
}

uint32_t virtio_regs__read(const struct virtio_regs *r, enum virtio_reg reg)
{
	const struct virtq_cfg *q = virtio_regs__selected(r);

	switch (reg) {
	case VREG_DEV_FEATURES_SEL:
		return r->dev_features_sel;
	case VREG_DEV_FEATURES:
		return features_half(r->vdev->features, r->dev_features_sel);
	case VREG_DRV_FEATURES_SEL:
		return r->drv_features_sel;
	case VREG_DRV_FEATURES:
		return features_half(r->drv_features, r->drv_features_sel);
	case VREG_NUM_QUEUES:
		return r->vdev->num_queues;
	case VREG_STATUS:
		return r->status |
		       (virtio_regs__broken(r) ? VIRTIO_CONFIG_S_NEEDS_RESET : 0);
	case VREG_CONFIG_GENERATION:
		return 0;	/* the config space never changes */
	case VREG_QUEUE_SEL:
		return r->queue_sel;
	default:
		/* a queue's register: 0 for a queue that does not exist */
		return q ? queue_read(r, q, reg) : 0;
	}
}

/*
 * A queue's configuration changes only while it is not enabled and the
 * driver is not running (4.2.2.2, 4.1.4.3.2).  Returns false when the
 * device needs a reset.
 */
static bool queue_write(struct virtio_regs *r, struct virtq_cfg *q,
			enum virtio_reg reg, uint32_t val)
{
	bool running = r->status & VIRTIO_CONFIG_S_DRIVER_OK;
	bool writable = !r->ready[r->queue_sel] && !running;

	if (reg == VREG_QUEUE_READY) {
		if (val == 1 && writable)
			return queue_enable(r->vdev, r->queue_sel, &r->mem, q);
		if (val == 0 && !running && r->rules.ready_zero_disables)
			r->ready[r->queue_sel] = false;
		return true;
	}
	if (!writable)
		return true;
	switch (reg) {
	case VREG_QUEUE_NUM:
		/* checked at enable (queue_max); read back as written */
		q->num = val > UINT16_MAX ? 0 : val;
		break;
	case VREG_QUEUE_DESC_LO:
	case VREG_QUEUE_DESC_HI:
		virtio__set_half(&q->desc, reg == VREG_QUEUE_DESC_HI, val);
		break;
	case VREG_QUEUE_AVAIL_LO:
	case VREG_QUEUE_AVAIL_HI:
		virtio__set_half(&q->avail, reg == VREG_QUEUE_AVAIL_HI, val);
		break;
	case VREG_QUEUE_USED_LO:
	case VREG_QUEUE_USED_HI:
		virtio__set_half(&q->used, reg == VREG_QUEUE_USED_HI, val);
		break;
	default:
		break;		/* read-only */
	}
	return true;
}

enum virtio_status_action virtio_regs__write(struct virtio_regs *r,
					     enum virtio_reg reg,
					     uint32_t val)
{
	struct virtq_cfg *q = virtio_regs__selected(r);

	switch (reg) {
	case VREG_DEV_FEATURES_SEL:
		r->dev_features_sel = val;
		break;
	case VREG_DRV_FEATURES_SEL:
		r->drv_features_sel = val;
		break;
	case VREG_DRV_FEATURES:
		/* FEATURES_OK freezes them */
		if (r->drv_features_sel <= 1 &&
		    !(r->status & VIRTIO_CONFIG_S_FEATURES_OK))
			virtio__set_half(&r->drv_features, r->drv_features_sel,
					 val);
		break;
	case VREG_STATUS:
		return status_write(r->vdev, &r->status, val, r->drv_features);
	case VREG_QUEUE_SEL:
		r->queue_sel = val;
		break;
	default:
		if (q && !queue_write(r, q, reg, val))
			return VIRTIO_STATUS_BROKEN;
		break;
	}
	return VIRTIO_STATUS_DONE;
}

bool virtio_regs__notifiable(const struct virtio_regs *r, uint64_t q)
{
	return (r->status & VIRTIO_CONFIG_S_DRIVER_OK) &&
	       !virtio_regs__broken(r) && q < r->vdev->num_queues &&
	       r->ready[q];
}

int virtio_regs__find(const struct virtio_reg_at *map, unsigned int n,
		      uint64_t off, enum virtio_reg *reg)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (map[i].off == off) {
			*reg = map[i].reg;
			return 0;
		}
	return -1;
}
