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

struct virtio_mmio {
	struct virtio_dev *vdev;
	struct virtq_mem mem;
	uint64_t base;
	unsigned int gsi;
	virtio_irq_fn irq;
	void *irq_opaque;

	pthread_mutex_t lock;
	uint32_t status;
	uint32_t dev_features_sel;
	uint32_t drv_features_sel;
	uint32_t queue_sel;
	uint64_t drv_features;
	struct virtq_cfg *queues;
	struct virtq *vqs;
	bool *ready;

	bool broken;			/* NEEDS_RESET, atomic */

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

	if (__atomic_exchange_n(&m->broken, true, __ATOMIC_ACQ_REL))
		return;
	raise_isr(m, VIRTIO_MMIO_INT_CONFIG);
}

static const struct virtio_transport_ops mmio_transport_ops = {
	.signal_used = mmio_signal_used,
	.needs_reset = mmio_needs_reset,
};

static bool broken(struct virtio_mmio *m)
{
	return __atomic_load_n(&m->broken, __ATOMIC_ACQUIRE);
}

/* Called with @lock held. */
static void device_reset(struct virtio_mmio *m)
{
	struct virtio_dev *vdev = m->vdev;
	unsigned int n = vdev->num_queues;

	vdev->ops->reset(vdev);
	memset(m->queues, 0, n * sizeof(*m->queues));
	memset(m->vqs, 0, n * sizeof(*m->vqs));
	memset(m->ready, 0, n * sizeof(*m->ready));
	m->status = 0;
	m->dev_features_sel = m->drv_features_sel = m->queue_sel = 0;
	m->drv_features = 0;
	vdev->driver_features = 0;
	__atomic_store_n(&m->broken, false, __ATOMIC_RELEASE);
	ack_isr(m, ~0u);
}

static struct virtq_cfg *selected(struct virtio_mmio *m)
{
	if (m->queue_sel >= m->vdev->num_queues)
		return NULL;
	return &m->queues[m->queue_sel];
}

static uint32_t reg_read(struct virtio_mmio *m, uint64_t off)
{
	struct virtio_dev *vdev = m->vdev;
	struct virtq_cfg *q = selected(m);

	switch (off) {
	case VIRTIO_MMIO_MAGIC_VALUE:
		return VIRTIO_MMIO_MAGIC;
	case VIRTIO_MMIO_VERSION:
		return 2;
	case VIRTIO_MMIO_DEVICE_ID:
		return vdev->device_id;
	case VIRTIO_MMIO_VENDOR_ID:
		return VIRTIO_MMIO_VENDOR;
	case VIRTIO_MMIO_DEVICE_FEATURES:
		if (m->dev_features_sel > 1)
			return 0;
		return vdev->features >> (32 * m->dev_features_sel);
	case VIRTIO_MMIO_QUEUE_NUM_MAX:
		return q ? vdev->queue_max : 0;
	case VIRTIO_MMIO_QUEUE_READY:
		return q ? m->ready[m->queue_sel] : 0;
	case VIRTIO_MMIO_INTERRUPT_STATUS:
		return __atomic_load_n(&m->isr, __ATOMIC_ACQUIRE);
	case VIRTIO_MMIO_STATUS:
		return m->status | (broken(m) ? VIRTIO_CONFIG_S_NEEDS_RESET : 0);
	case VIRTIO_MMIO_CONFIG_GENERATION:
		return 0;	/* the config space never changes */
	case VIRTIO_MMIO_QUEUE_DESC_LOW:
		return q ? (uint32_t)q->desc : 0;
	case VIRTIO_MMIO_QUEUE_DESC_HIGH:
		return q ? q->desc >> 32 : 0;
	case VIRTIO_MMIO_QUEUE_AVAIL_LOW:
		return q ? (uint32_t)q->avail : 0;
	case VIRTIO_MMIO_QUEUE_AVAIL_HIGH:
		return q ? q->avail >> 32 : 0;
	case VIRTIO_MMIO_QUEUE_USED_LOW:
		return q ? (uint32_t)q->used : 0;
	case VIRTIO_MMIO_QUEUE_USED_HIGH:
		return q ? q->used >> 32 : 0;
	default:
		return 0;
	}
}

/* QueueReady = 1: the one check of a queue's configuration. */
static void queue_enable(struct virtio_mmio *m)
{
	struct virtq_cfg *q = selected(m);
	unsigned int i = m->queue_sel;

	if (!q || m->ready[i])
		return;
	if (!virtio__queue_enable(m->vdev, i, &m->mem, q))
		mmio_needs_reset(m);
}

static void status_write(struct virtio_mmio *m, uint32_t val)
{
	switch (virtio__status_write(m->vdev, &m->status, val,
				     m->drv_features)) {
	case VIRTIO_STATUS_RESET:
		device_reset(m);
		break;
	case VIRTIO_STATUS_BROKEN:
		mmio_needs_reset(m);
		break;
	case VIRTIO_STATUS_DONE:
		break;
	}
}

/*
 * Returns the queue to notify, or -1.  Queue registers only change while
 * the queue is not ready and the driver is not running.
 */
static int reg_write(struct virtio_mmio *m, uint64_t off, uint32_t val)
{
	struct virtq_cfg *q = selected(m);
	bool q_writable = q && !m->ready[m->queue_sel] &&
			  !(m->status & VIRTIO_CONFIG_S_DRIVER_OK);

	switch (off) {
	case VIRTIO_MMIO_DEVICE_FEATURES_SEL:
		m->dev_features_sel = val;
		break;
	case VIRTIO_MMIO_DRIVER_FEATURES_SEL:
		m->drv_features_sel = val;
		break;
	case VIRTIO_MMIO_DRIVER_FEATURES:
		if (m->drv_features_sel <= 1 &&
		    !(m->status & VIRTIO_CONFIG_S_FEATURES_OK))
			virtio__set_half(&m->drv_features, m->drv_features_sel, val);
		break;
	case VIRTIO_MMIO_QUEUE_SEL:
		m->queue_sel = val;
		break;
	case VIRTIO_MMIO_QUEUE_NUM:
		if (q_writable)
			q->num = val > VIRTQ_MAX_SIZE ? 0 : val;
		break;
	case VIRTIO_MMIO_QUEUE_DESC_LOW:
	case VIRTIO_MMIO_QUEUE_DESC_HIGH:
		if (q_writable)
			virtio__set_half(&q->desc, off == VIRTIO_MMIO_QUEUE_DESC_HIGH, val);
		break;
	case VIRTIO_MMIO_QUEUE_AVAIL_LOW:
	case VIRTIO_MMIO_QUEUE_AVAIL_HIGH:
		if (q_writable)
			virtio__set_half(&q->avail, off == VIRTIO_MMIO_QUEUE_AVAIL_HIGH, val);
		break;
	case VIRTIO_MMIO_QUEUE_USED_LOW:
	case VIRTIO_MMIO_QUEUE_USED_HIGH:
		if (q_writable)
			virtio__set_half(&q->used, off == VIRTIO_MMIO_QUEUE_USED_HIGH, val);
		break;
	case VIRTIO_MMIO_QUEUE_READY:
		if (val == 1 && q_writable)
			queue_enable(m);
		else if (val == 0 && q && !(m->status & VIRTIO_CONFIG_S_DRIVER_OK))
			m->ready[m->queue_sel] = false;
		break;
	case VIRTIO_MMIO_QUEUE_NOTIFY:
		if ((m->status & VIRTIO_CONFIG_S_DRIVER_OK) && !broken(m) &&
		    val < m->vdev->num_queues && m->ready[val])
			return val;
		break;
	case VIRTIO_MMIO_INTERRUPT_ACK:
		ack_isr(m, val);
		break;
	case VIRTIO_MMIO_STATUS:
		status_write(m, val);
		break;
	default:
		break;		/* read-only or unknown: ignored */
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
	unsigned int n = vdev->num_queues;
	struct virtio_mmio *m;

	if (!n || !vdev->queue_max || vdev->queue_max > VIRTQ_MAX_SIZE ||
	    (vdev->queue_max & (vdev->queue_max - 1)) ||
	    !(vdev->features & (1ULL << VIRTIO_F_VERSION_1)) ||
	    vdev->config_size > VIRTIO_MMIO_WINDOW - VIRTIO_MMIO_CONFIG_OFF)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->queues = calloc(n, sizeof(*m->queues));
	m->vqs = calloc(n, sizeof(*m->vqs));
	m->ready = calloc(n, sizeof(*m->ready));
	if (!m->queues || !m->vqs || !m->ready) {
		free(m->queues);
		free(m->vqs);
		free(m->ready);
		free(m);
		return NULL;
	}
	m->vdev = vdev;
	m->mem = *mem;
	m->base = base;
	m->gsi = gsi;
	m->irq = irq;
	m->irq_opaque = irq_opaque;
	pthread_mutex_init(&m->lock, NULL);
	pthread_mutex_init(&m->irq_lock, NULL);
	vdev->vqs = m->vqs;
	vdev->ready = m->ready;
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
	m->vdev->vqs = NULL;
	m->vdev->ready = NULL;
	free(m->queues);
	free(m->vqs);
	free(m->ready);
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
