// SPDX-License-Identifier: GPL-2.0-only
/*
 * Locking: @lock covers the register file (status, selectors, queue
 * configuration); vCPU threads take it for every register access except
 * the interrupt registers.  @irq_lock covers the interrupt status and the
 * line, which completion threads change.  A queue notification is checked
 * under @lock and delivered after dropping it, so vCPUs notifying
 * different queues run their device work in parallel; the device keeps
 * its own per-queue state safe against a concurrent reset.  NEEDS_RESET
 * is a separate atomic flag because the device raises it from any thread,
 * including from inside activate() while @lock is held.  The queues'
 * EVENT_IDX flag is set under @lock at DRIVER_OK, before activate() hands
 * the queues to the device, whose per-queue locks publish it onwards.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_mmio.h>

#include "virtio/mmio.h"
#include "virtio/regs.h"

struct virtio_mmio {
	struct virtio_dev *vdev;
	uint64_t base;
	unsigned int gsi;
	virtio_irq_fn irq;
	void *irq_opaque;

	pthread_mutex_t lock;
	struct virtio_regs regs;

	pthread_mutex_t irq_lock;
	uint32_t isr;
	int line;
};

static void raise_isr(struct virtio_mmio *m, uint32_t bits)
{
	pthread_mutex_lock(&m->irq_lock);
	m->isr |= bits;
	if (!m->line) {
		m->line = 1;
		m->irq(m->irq_opaque, m->gsi, 1);
	}
	pthread_mutex_unlock(&m->irq_lock);
}

static void ack_isr(struct virtio_mmio *m, uint32_t bits)
{
	pthread_mutex_lock(&m->irq_lock);
	m->isr &= ~bits;
	if (!m->isr && m->line) {
		m->line = 0;
		m->irq(m->irq_opaque, m->gsi, 0);
	}
	pthread_mutex_unlock(&m->irq_lock);
}

/* One line for the whole device: the queue makes no difference. */
static void mmio_signal_used(void *transport, unsigned int q)
{
	raise_isr(transport, VIRTIO_MMIO_INT_VRING);
}

static void mmio_needs_reset(void *transport)
{
	struct virtio_mmio *m = transport;

	if (virtio_regs__break(&m->regs))
		raise_isr(m, VIRTIO_MMIO_INT_CONFIG);
}

static const struct virtio_transport_ops mmio_transport_ops = {
	.signal_used = mmio_signal_used,
	.needs_reset = mmio_needs_reset,
};

/* Called with @lock held. */
static void device_reset(struct virtio_mmio *m)
{
	m->vdev->ops->reset(m->vdev);
	virtio_regs__reset(&m->regs);
	ack_isr(m, ~0u);
}

/* The registers both transports have, at their mmio offsets. */
static const struct virtio_reg_at regs_at[] = {
	{ VIRTIO_MMIO_DEVICE_FEATURES, VREG_DEV_FEATURES },
	{ VIRTIO_MMIO_DEVICE_FEATURES_SEL, VREG_DEV_FEATURES_SEL },
	{ VIRTIO_MMIO_DRIVER_FEATURES, VREG_DRV_FEATURES },
	{ VIRTIO_MMIO_DRIVER_FEATURES_SEL, VREG_DRV_FEATURES_SEL },
	{ VIRTIO_MMIO_QUEUE_SEL, VREG_QUEUE_SEL },
	{ VIRTIO_MMIO_QUEUE_NUM_MAX, VREG_QUEUE_NUM_MAX },
	{ VIRTIO_MMIO_QUEUE_NUM, VREG_QUEUE_NUM },
	{ VIRTIO_MMIO_QUEUE_READY, VREG_QUEUE_READY },
	{ VIRTIO_MMIO_STATUS, VREG_STATUS },
	{ VIRTIO_MMIO_QUEUE_DESC_LOW, VREG_QUEUE_DESC_LO },
	{ VIRTIO_MMIO_QUEUE_DESC_HIGH, VREG_QUEUE_DESC_HI },
	{ VIRTIO_MMIO_QUEUE_AVAIL_LOW, VREG_QUEUE_AVAIL_LO },
	{ VIRTIO_MMIO_QUEUE_AVAIL_HIGH, VREG_QUEUE_AVAIL_HI },
	{ VIRTIO_MMIO_QUEUE_USED_LOW, VREG_QUEUE_USED_LO },
	{ VIRTIO_MMIO_QUEUE_USED_HIGH, VREG_QUEUE_USED_HI },
	{ VIRTIO_MMIO_CONFIG_GENERATION, VREG_CONFIG_GENERATION },
};

static int reg_of(uint64_t off, enum virtio_reg *reg)
{
	return virtio_regs__find(regs_at, sizeof(regs_at) / sizeof(regs_at[0]),
				 off, reg);
}

static uint32_t reg_read(struct virtio_mmio *m, uint64_t off)
{
	enum virtio_reg reg;

	switch (off) {
	case VIRTIO_MMIO_MAGIC_VALUE:
		return VIRTIO_MMIO_MAGIC;
	case VIRTIO_MMIO_VERSION:
		return 2;
	case VIRTIO_MMIO_DEVICE_ID:
		return m->vdev->device_id;
	case VIRTIO_MMIO_VENDOR_ID:
		return VIRTIO_MMIO_VENDOR;
	case VIRTIO_MMIO_INTERRUPT_STATUS:
		return __atomic_load_n(&m->isr, __ATOMIC_ACQUIRE);
	/* write-only in virtio-mmio */
	case VIRTIO_MMIO_DEVICE_FEATURES_SEL:
	case VIRTIO_MMIO_DRIVER_FEATURES:
	case VIRTIO_MMIO_DRIVER_FEATURES_SEL:
	case VIRTIO_MMIO_QUEUE_SEL:
	case VIRTIO_MMIO_QUEUE_NUM:
		return 0;
	default:
		return reg_of(off, &reg) ? 0 : virtio_regs__read(&m->regs, reg);
	}
}

/* Returns the queue to notify, or -1. */
static int reg_write(struct virtio_mmio *m, uint64_t off, uint32_t val)
{
	enum virtio_reg reg;

	switch (off) {
	case VIRTIO_MMIO_QUEUE_NOTIFY:
		return virtio_regs__notifiable(&m->regs, val) ? (int)val : -1;
	case VIRTIO_MMIO_INTERRUPT_ACK:
		ack_isr(m, val);
		return -1;
	}
	if (reg_of(off, &reg))
		return -1;	/* unknown: ignored */
	switch (virtio_regs__write(&m->regs, reg, val)) {
	case VIRTIO_STATUS_RESET:
		device_reset(m);
		break;
	case VIRTIO_STATUS_BROKEN:
		mmio_needs_reset(m);
		break;
	case VIRTIO_STATUS_DONE:
		break;
	}
	return -1;
}

static void virtio_mmio_read(void *opaque, uint64_t off, void *data,
			     unsigned int len)
{
	struct virtio_mmio *m = opaque;
	uint32_t val;

	memset(data, 0, len);
	if (off >= VIRTIO_MMIO_CONFIG_OFF) {
		off -= VIRTIO_MMIO_CONFIG_OFF;
		if (off < m->vdev->config_size &&
		    len <= m->vdev->config_size - off)
			m->vdev->ops->config_read(m->vdev, off, data, len);
		return;
	}
	if (len != 4 || (off & 3))
		return;
	pthread_mutex_lock(&m->lock);
	val = reg_read(m, off);
	pthread_mutex_unlock(&m->lock);
	memcpy(data, &val, sizeof(val));
}

static void virtio_mmio_write(void *opaque, uint64_t off, const void *data,
			      unsigned int len)
{
	struct virtio_mmio *m = opaque;
	uint32_t val;
	int q;

	/* Config space is read-only: no writable config feature is offered. */
	if (off >= VIRTIO_MMIO_CONFIG_OFF || len != 4 || (off & 3))
		return;
	memcpy(&val, data, sizeof(val));
	pthread_mutex_lock(&m->lock);
	q = reg_write(m, off, val);
	pthread_mutex_unlock(&m->lock);
	if (q >= 0)
		m->vdev->ops->notify(m->vdev, q);
}

const struct bus_dev_ops virtio_mmio__ops = {
	.read = virtio_mmio_read,
	.write = virtio_mmio_write,
};

struct virtio_mmio *virtio_mmio__create(struct virtio_dev *vdev,
					const struct virtq_mem *mem,
					uint64_t base, unsigned int gsi,
					virtio_irq_fn irq, void *irq_opaque)
{
	struct virtio_mmio *m;

	if (!vdev->num_queues || !vdev->queue_max || vdev->queue_max > VIRTQ_MAX_SIZE ||
	    (vdev->queue_max & (vdev->queue_max - 1)) ||
	    !(vdev->features & (1ULL << VIRTIO_F_VERSION_1)) ||
	    vdev->config_size > VIRTIO_MMIO_WINDOW - VIRTIO_MMIO_CONFIG_OFF)
		return NULL;
	static const struct virtio_regs_rules rules = {
		.ready_zero_disables = true,
	};

	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	if (virtio_regs__init(&m->regs, vdev, mem, &rules)) {
		free(m);
		return NULL;
	}
	m->vdev = vdev;
	m->base = base;
	m->gsi = gsi;
	m->irq = irq;
	m->irq_opaque = irq_opaque;
	pthread_mutex_init(&m->lock, NULL);
	pthread_mutex_init(&m->irq_lock, NULL);
	vdev->tops = &mmio_transport_ops;
	vdev->transport = m;
	return m;
}

void virtio_mmio__destroy(struct virtio_mmio *m)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	device_reset(m);
	pthread_mutex_unlock(&m->lock);
	virtio_regs__exit(&m->regs);
	pthread_mutex_destroy(&m->lock);
	pthread_mutex_destroy(&m->irq_lock);
	free(m);
}

int virtio_mmio__attach(struct virtio_mmio *m, struct bus *mmio)
{
	return bus__register(mmio, m->base, VIRTIO_MMIO_WINDOW,
			     &virtio_mmio__ops, m);
}

uint64_t virtio_mmio__base(const struct virtio_mmio *m)
{
	return m->base;
}

unsigned int virtio_mmio__gsi(const struct virtio_mmio *m)
{
	return m->gsi;
}
