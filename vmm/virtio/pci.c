// SPDX-License-Identifier: GPL-2.0-only
/*
 * Locking, as in mmio.c: @lock covers the common configuration (status,
 * selectors, queue setup) and is taken by vCPUs for every access to it
 * and to check a notification, which is delivered after dropping it.
 * Completion threads only read a queue's vector (an atomic load) and go
 * to the MSI-X state, which has its own lock, so they never wait for a
 * vCPU's register access.  NEEDS_RESET is an atomic flag, raised from any
 * thread.  Configuration-space accesses come serialised by the host
 * bridge; they only reach the MSI-X control bits here.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_ids.h>

#include "virtio/pci.h"
#include "virtio/regs.h"

/* Class codes: a block device is mass storage, anything else "other". */
#define CLASS_STORAGE_OTHER	0x018000
#define CLASS_OTHER		0xff0000

struct virtio_pci {
	struct virtio_dev *vdev;
	uint32_t bar_addr;
	struct pci_func func;
	struct msix msix;

	pthread_mutex_t lock;
	struct virtio_regs regs;
	/* atomic: read by completion threads */
	uint16_t msix_config;
	uint16_t *vectors;	/* one per queue */
	uint8_t isr;		/* atomic */
};

static void pci_signal_used(void *transport, unsigned int q)
{
	struct virtio_pci *p = transport;

	if (q >= p->vdev->num_queues)
		return;
	/* No ISR queue bit: that is for INTx (4.1.4.5), which we lack. */
	msix__notify(&p->msix, __atomic_load_n(&p->vectors[q],
					       __ATOMIC_ACQUIRE));
}

static void pci_needs_reset(void *transport)
{
	struct virtio_pci *p = transport;

	if (!virtio_regs__break(&p->regs))
		return;
	__atomic_fetch_or(&p->isr, VIRTIO_PCI_ISR_CONFIG, __ATOMIC_ACQ_REL);
	msix__notify(&p->msix, __atomic_load_n(&p->msix_config,
					       __ATOMIC_ACQUIRE));
}

static const struct virtio_transport_ops pci_transport_ops = {
	.signal_used = pci_signal_used,
	.needs_reset = pci_needs_reset,
};

/* A vector the table holds, else "none" (4.1.5.1.2). */
static uint16_t checked_vector(struct virtio_pci *p, uint32_t v)
{
	return v < p->msix.nvec ? v : VIRTIO_MSI_NO_VECTOR;
}

/* The transport's registers as after a reset (4.1.4.3.1, 4.1.5.1.2). */
static void regs_reset(struct virtio_pci *p)
{
	unsigned int i;

	for (i = 0; i < p->vdev->num_queues; i++)
		__atomic_store_n(&p->vectors[i], VIRTIO_MSI_NO_VECTOR,
				 __ATOMIC_RELEASE);
	__atomic_store_n(&p->msix_config, VIRTIO_MSI_NO_VECTOR,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&p->isr, 0, __ATOMIC_RELEASE);
	/* NEEDS_RESET clears last: a needs_reset() from now on is a new one */
	virtio_regs__reset(&p->regs);
}

/* Called with @lock held. */
static void device_reset(struct virtio_pci *p)
{
	p->vdev->ops->reset(p->vdev);
	regs_reset(p);
}

/* The selected queue's vector, or NULL past the last queue. */
static uint16_t *selected_vector(struct virtio_pci *p)
{
	if (p->regs.queue_sel >= p->vdev->num_queues)
		return NULL;
	return &p->vectors[p->regs.queue_sel];
}

/* The width of the field at @off, 0 for none; 64-bit ones are 2 dwords. */
static unsigned int common_width(uint64_t off)
{
	switch (off) {
	case VIRTIO_PCI_COMMON_DFSELECT:
	case VIRTIO_PCI_COMMON_DF:
	case VIRTIO_PCI_COMMON_GFSELECT:
	case VIRTIO_PCI_COMMON_GF:
	case VIRTIO_PCI_COMMON_Q_DESCLO:
	case VIRTIO_PCI_COMMON_Q_DESCHI:
	case VIRTIO_PCI_COMMON_Q_AVAILLO:
	case VIRTIO_PCI_COMMON_Q_AVAILHI:
	case VIRTIO_PCI_COMMON_Q_USEDLO:
	case VIRTIO_PCI_COMMON_Q_USEDHI:
		return 4;
	case VIRTIO_PCI_COMMON_MSIX:
	case VIRTIO_PCI_COMMON_NUMQ:
	case VIRTIO_PCI_COMMON_Q_SELECT:
	case VIRTIO_PCI_COMMON_Q_SIZE:
	case VIRTIO_PCI_COMMON_Q_MSIX:
	case VIRTIO_PCI_COMMON_Q_ENABLE:
	case VIRTIO_PCI_COMMON_Q_NOFF:
		return 2;
	case VIRTIO_PCI_COMMON_STATUS:
	case VIRTIO_PCI_COMMON_CFGGENERATION:
		return 1;
	default:
		return 0;
	}
}

static bool is_64bit_low(uint64_t off)
{
	return off == VIRTIO_PCI_COMMON_Q_DESCLO ||
	       off == VIRTIO_PCI_COMMON_Q_AVAILLO ||
	       off == VIRTIO_PCI_COMMON_Q_USEDLO;
}

/* The registers both transports have, at their common-config offsets. */
static const struct virtio_reg_at regs_at[] = {
	{ VIRTIO_PCI_COMMON_DFSELECT, VREG_DEV_FEATURES_SEL },
	{ VIRTIO_PCI_COMMON_DF, VREG_DEV_FEATURES },
	{ VIRTIO_PCI_COMMON_GFSELECT, VREG_DRV_FEATURES_SEL },
	{ VIRTIO_PCI_COMMON_GF, VREG_DRV_FEATURES },
	{ VIRTIO_PCI_COMMON_NUMQ, VREG_NUM_QUEUES },
	{ VIRTIO_PCI_COMMON_STATUS, VREG_STATUS },
	{ VIRTIO_PCI_COMMON_CFGGENERATION, VREG_CONFIG_GENERATION },
	{ VIRTIO_PCI_COMMON_Q_SELECT, VREG_QUEUE_SEL },
	{ VIRTIO_PCI_COMMON_Q_SIZE, VREG_QUEUE_NUM },
	{ VIRTIO_PCI_COMMON_Q_ENABLE, VREG_QUEUE_READY },
	{ VIRTIO_PCI_COMMON_Q_DESCLO, VREG_QUEUE_DESC_LO },
	{ VIRTIO_PCI_COMMON_Q_DESCHI, VREG_QUEUE_DESC_HI },
	{ VIRTIO_PCI_COMMON_Q_AVAILLO, VREG_QUEUE_AVAIL_LO },
	{ VIRTIO_PCI_COMMON_Q_AVAILHI, VREG_QUEUE_AVAIL_HI },
	{ VIRTIO_PCI_COMMON_Q_USEDLO, VREG_QUEUE_USED_LO },
	{ VIRTIO_PCI_COMMON_Q_USEDHI, VREG_QUEUE_USED_HI },
};

static int reg_of(uint64_t off, enum virtio_reg *reg)
{
	return virtio_regs__find(regs_at, sizeof(regs_at) / sizeof(regs_at[0]),
				 off, reg);
}

/* One field read, its width already checked. */
static uint32_t common_read(struct virtio_pci *p, uint64_t off)
{
	uint16_t *vector = selected_vector(p);
	enum virtio_reg reg;

	switch (off) {
	case VIRTIO_PCI_COMMON_MSIX:
		return p->msix_config;
	case VIRTIO_PCI_COMMON_Q_MSIX:
		return vector ? *vector : VIRTIO_MSI_NO_VECTOR;
	case VIRTIO_PCI_COMMON_Q_NOFF:
		/* each queue's notify register is its own (multiplier) */
		return vector ? p->regs.queue_sel : 0;
	default:
		return reg_of(off, &reg) ? 0 : virtio_regs__read(&p->regs, reg);
	}
}

/*
 * One field write, its width already checked.  Vectors may change at any
 * time (the driver detaches them on teardown); the rest is the common
 * register file's.
 */
static void common_write(struct virtio_pci *p, uint64_t off, uint32_t val)
{
	uint16_t *vector = selected_vector(p);
	enum virtio_reg reg;

	switch (off) {
	case VIRTIO_PCI_COMMON_MSIX:
		__atomic_store_n(&p->msix_config, checked_vector(p, val),
				 __ATOMIC_RELEASE);
		return;
	case VIRTIO_PCI_COMMON_Q_MSIX:
		if (vector)
			__atomic_store_n(vector, checked_vector(p, val),
					 __ATOMIC_RELEASE);
		return;
	}
	if (reg_of(off, &reg))
		return;		/* read-only: ignored */
	switch (virtio_regs__write(&p->regs, reg, val)) {
	case VIRTIO_STATUS_RESET:
		device_reset(p);
		break;
	case VIRTIO_STATUS_BROKEN:
		pci_needs_reset(p);
		break;
	case VIRTIO_STATUS_DONE:
		break;
	}
}

/*
 * Splits an access into field accesses: one field at its width, or a
 * whole 64-bit field as its two dwords.  Returns how many (0: refused).
 */
static unsigned int common_fields(uint64_t off, unsigned int len)
{
	if (off < VIRTIO_PCI_COMMON_LEN && common_width(off) == len)
		return 1;
	if (len == 8 && is_64bit_low(off))
		return 2;
	return 0;
}

static void common_access_read(struct virtio_pci *p, uint64_t off,
			       void *data, unsigned int len)
{
	unsigned int i, n = common_fields(off, len);
	uint32_t v;

	memset(data, 0, len);
	pthread_mutex_lock(&p->lock);
	for (i = 0; i < n; i++) {
		v = common_read(p, off + 4 * i);
		memcpy((uint8_t *)data + 4 * i, &v, n == 2 ? 4 : len);
	}
	pthread_mutex_unlock(&p->lock);
}

static void common_access_write(struct virtio_pci *p, uint64_t off,
				const void *data, unsigned int len)
{
	unsigned int i, n = common_fields(off, len);
	uint32_t v;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < n; i++) {
		v = 0;
		memcpy(&v, (const uint8_t *)data + 4 * i, n == 2 ? 4 : len);
		common_write(p, off + 4 * i, v);
	}
	pthread_mutex_unlock(&p->lock);
}

/* Reading ISR clears it (4.1.4.5); one byte. */
static void isr_read(struct virtio_pci *p, uint64_t off, void *data,
		     unsigned int len)
{
	memset(data, 0, len);
	if (off == 0 && len == 1)
		*(uint8_t *)data = __atomic_exchange_n(&p->isr, 0,
						       __ATOMIC_ACQ_REL);
}

static void device_cfg_read(struct virtio_pci *p, uint64_t off, void *data,
			    unsigned int len)
{
	struct virtio_dev *vdev = p->vdev;

	memset(data, 0, len);
	if (off < vdev->config_size && len <= vdev->config_size - off)
		vdev->ops->config_read(vdev, off, data, len);
}

/*
 * A notify register write (service=vcpu; with service=iothread an ioeventfd takes
 * it inside KVM): the queue is the register's, and the value must name
 * it, as the ioeventfd's datamatch requires too.  Returns the queue or -1.
 */
static int notify_queue(struct virtio_pci *p, uint64_t off, const void *data,
			unsigned int len)
{
	uint64_t q = off / VIRTIO_PCI_NOTIFY_MULT;
	uint32_t val = 0;
	int ret = -1;

	if ((len != 2 && len != 4) || off % VIRTIO_PCI_NOTIFY_MULT ||
	    q >= p->vdev->num_queues)
		return -1;
	memcpy(&val, data, len);
	if (val != q)
		return -1;
	pthread_mutex_lock(&p->lock);
	if (virtio_regs__notifiable(&p->regs, q))
		ret = q;
	pthread_mutex_unlock(&p->lock);
	return ret;
}

enum region { R_COMMON, R_ISR, R_DEVICE, R_NOTIFY, R_TABLE, R_PBA, R_NONE };

static enum region region_of(uint64_t off, uint64_t *rel)
{
	*rel = off % VIRTIO_PCI_REGION_SIZE;
	switch (off - *rel) {
	case VIRTIO_PCI_COMMON_OFF:
		return R_COMMON;
	case VIRTIO_PCI_ISR_OFF:
		return R_ISR;
	case VIRTIO_PCI_DEVICE_OFF:
		return R_DEVICE;
	case VIRTIO_PCI_NOTIFY_OFF:
		return R_NOTIFY;
	case VIRTIO_PCI_MSIX_TABLE_OFF:
		return R_TABLE;
	case VIRTIO_PCI_MSIX_PBA_OFF:
		return R_PBA;
	default:
		return R_NONE;
	}
}

static void bar_read(void *opaque, uint64_t off, void *data, unsigned int len)
{
	struct virtio_pci *p = opaque;
	uint64_t rel;

	memset(data, 0xff, len);
	if (!pci_func__bar_decodes(&p->func, VIRTIO_PCI_BAR))
		return;		/* memory decode off: nothing answers */
	switch (region_of(off, &rel)) {
	case R_COMMON:
		common_access_read(p, rel, data, len);
		break;
	case R_ISR:
		isr_read(p, rel, data, len);
		break;
	case R_DEVICE:
		device_cfg_read(p, rel, data, len);
		break;
	case R_TABLE:
		msix__table_read(&p->msix, rel, data, len);
		break;
	case R_PBA:
		msix__pba_read(&p->msix, rel, data, len);
		break;
	case R_NOTIFY:
	case R_NONE:
		memset(data, 0, len);
		break;
	}
}

static void bar_write(void *opaque, uint64_t off, const void *data,
		      unsigned int len)
{
	struct virtio_pci *p = opaque;
	uint64_t rel;
	int q;

	if (!pci_func__bar_decodes(&p->func, VIRTIO_PCI_BAR))
		return;
	switch (region_of(off, &rel)) {
	case R_COMMON:
		common_access_write(p, rel, data, len);
		break;
	case R_NOTIFY:
		q = notify_queue(p, rel, data, len);
		if (q >= 0)
			p->vdev->ops->notify(p->vdev, q);
		break;
	case R_TABLE:
		msix__table_write(&p->msix, rel, data, len);
		break;
	default:
		break;		/* ISR, device config, PBA: read-only */
	}
}

const struct bus_dev_ops virtio_pci__bar_ops = {
	.read = bar_read,
	.write = bar_write,
};

static void cfg_written(void *opaque, struct pci_func *f, unsigned int off,
			unsigned int len)
{
	struct virtio_pci *p = opaque;

	msix__cfg_written(&p->msix, f);
}

/* A virtio vendor capability (4.1.4) for region @type at @off, @len. */
static int add_virtio_cap(struct pci_func *f, uint8_t type, uint32_t off,
			  uint32_t len, const uint32_t *notify_mult)
{
	uint8_t cap[sizeof(struct virtio_pci_notify_cap)] = {
		[VIRTIO_PCI_CAP_VNDR] = PCI_CAP_ID_VNDR,
		[VIRTIO_PCI_CAP_CFG_TYPE] = type,
		[VIRTIO_PCI_CAP_BAR] = VIRTIO_PCI_BAR,
	};
	unsigned int n = notify_mult ? sizeof(struct virtio_pci_notify_cap) :
				       sizeof(struct virtio_pci_cap);

	cap[VIRTIO_PCI_CAP_LEN] = n;
	memcpy(cap + VIRTIO_PCI_CAP_OFFSET, &off, sizeof(off));
	memcpy(cap + VIRTIO_PCI_CAP_LENGTH, &len, sizeof(len));
	if (notify_mult)
		memcpy(cap + sizeof(struct virtio_pci_cap), notify_mult,
		       sizeof(*notify_mult));
	return pci_func__add_cap(f, cap, n) ? 0 : -ENOSPC;
}

static int build_func(struct virtio_pci *p)
{
	struct virtio_dev *vdev = p->vdev;
	struct pci_func *f = &p->func;
	uint32_t mult = VIRTIO_PCI_NOTIFY_MULT;
	int ret;

	uint32_t class_code = vdev->device_id == VIRTIO_ID_BLOCK ?
			      CLASS_STORAGE_OTHER : CLASS_OTHER;

	pci_func__init(f, VIRTIO_PCI_VENDOR,
		       VIRTIO_PCI_DEVICE_BASE + vdev->device_id, class_code, 1);
	pci_func__set_subsystem(f, VIRTIO_PCI_VENDOR, vdev->device_id);
	f->written = cfg_written;
	f->opaque = p;
	ret = pci_func__set_bar(f, VIRTIO_PCI_BAR, p->bar_addr,
				VIRTIO_PCI_BAR_SIZE);
	if (!ret)
		ret = add_virtio_cap(f, VIRTIO_PCI_CAP_COMMON_CFG,
				     VIRTIO_PCI_COMMON_OFF,
				     VIRTIO_PCI_COMMON_LEN, NULL);
	if (!ret)
		ret = add_virtio_cap(f, VIRTIO_PCI_CAP_ISR_CFG,
				     VIRTIO_PCI_ISR_OFF, 1, NULL);
	if (!ret && vdev->config_size)
		ret = add_virtio_cap(f, VIRTIO_PCI_CAP_DEVICE_CFG,
				     VIRTIO_PCI_DEVICE_OFF, vdev->config_size,
				     NULL);
	if (!ret)
		ret = add_virtio_cap(f, VIRTIO_PCI_CAP_NOTIFY_CFG,
				     VIRTIO_PCI_NOTIFY_OFF,
				     vdev->num_queues * VIRTIO_PCI_NOTIFY_MULT,
				     &mult);
	if (!ret)
		ret = msix__add_cap(&p->msix, f, VIRTIO_PCI_BAR,
				    VIRTIO_PCI_MSIX_TABLE_OFF,
				    VIRTIO_PCI_MSIX_PBA_OFF);
	return ret;
}

static bool dev_ok(const struct virtio_dev *vdev, uint32_t bar_addr)
{
	unsigned int n = vdev->num_queues;

	return n && vdev->queue_max && vdev->queue_max <= VIRTQ_MAX_SIZE &&
	       !(vdev->queue_max & (vdev->queue_max - 1)) &&
	       (vdev->features & (1ULL << VIRTIO_F_VERSION_1)) &&
	       vdev->config_size <= VIRTIO_PCI_REGION_SIZE &&
	       n * VIRTIO_PCI_NOTIFY_MULT <= VIRTIO_PCI_REGION_SIZE &&
	       msix__table_bytes(n + 1) <= VIRTIO_PCI_REGION_SIZE &&
	       bar_addr && !(bar_addr & (VIRTIO_PCI_BAR_SIZE - 1));
}

static void free_pci(struct virtio_pci *p)
{
	msix__exit(&p->msix);
	virtio_regs__exit(&p->regs);
	free(p->vectors);
	free(p);
}

struct virtio_pci *virtio_pci__create(struct virtio_dev *vdev,
				      const struct virtq_mem *mem,
				      uint32_t bar_addr, msix_send_fn send,
				      void *send_opaque)
{
	static const struct virtio_regs_rules rules = {
		.num_starts_at_max = true,
	};
	unsigned int n = vdev->num_queues;
	struct virtio_pci *p;

	if (!dev_ok(vdev, bar_addr))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->vdev = vdev;
	p->vectors = calloc(n, sizeof(*p->vectors));
	/* One vector per queue, one for configuration changes. */
	if (!p->vectors || virtio_regs__init(&p->regs, vdev, mem, &rules) ||
	    msix__init(&p->msix, n + 1, send, send_opaque)) {
		free_pci(p);
		return NULL;
	}
	p->bar_addr = bar_addr;
	if (build_func(p)) {
		free_pci(p);
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	regs_reset(p);
	vdev->tops = &pci_transport_ops;
	vdev->transport = p;
	return p;
}

void virtio_pci__destroy(struct virtio_pci *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	device_reset(p);
	pthread_mutex_unlock(&p->lock);
	pthread_mutex_destroy(&p->lock);
	free_pci(p);
}

struct pci_func *virtio_pci__func(struct virtio_pci *p)
{
	return &p->func;
}

int virtio_pci__attach(struct virtio_pci *p, struct bus *mmio)
{
	return bus__register(mmio, p->bar_addr, VIRTIO_PCI_BAR_SIZE,
			     &virtio_pci__bar_ops, p);
}

uint64_t virtio_pci__notify_addr(const struct virtio_pci *p, unsigned int q)
{
	return (uint64_t)p->bar_addr + VIRTIO_PCI_NOTIFY_OFF +
	       q * VIRTIO_PCI_NOTIFY_MULT;
}
