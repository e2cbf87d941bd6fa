// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the PCI side of gpin-vmm as a hostile guest reaches
 * it - configuration mechanism #1 (pci/host.c, pci/pci.c), the virtio-pci
 * BAR (virtio/pci.c: common configuration, notify, ISR, device config)
 * and the MSI-X table and PBA (pci/msix.c) - driven by a sequence of
 * accesses read from the input, with a fake device in between.
 *
 * Each access is 8 bytes: kind (config port / BAR, read / write), width
 * (1, 2, 4 or 8, as the buses allow), offset, value.  The fake device
 * raises a queue's interrupt now and then, so MSI-X delivery runs with
 * whatever vectors and masks the input left.  What must hold: no crash or
 * sanitizer report, every MSI sent has an x86 MSI address, and the
 * transport never hands the device a queue that is not ready.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_ids.h>

#include "arch/x86/layout.h"
#include "pci/host.h"
#include "virtio/pci.h"

#define RAM_SIZE	0x10000
#define NQ		3
#define BAR_ADDR	0xe0000000u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t ram[RAM_SIZE];
static struct virtio_dev vdev;

static void *translate(void *opaque, uint64_t gpa, uint64_t len)
{
	if (gpa > RAM_SIZE || len > RAM_SIZE - gpa)
		return NULL;
	return ram + gpa;
}

static void fake_config_read(struct virtio_dev *d, uint32_t off, void *buf,
			     unsigned int len)
{
	if (off > 32 || len > 32 - off)
		abort();
	memset(buf, 0x5a, len);
}

static int fake_activate(struct virtio_dev *d)
{
	return 0;
}

static void fake_notify(struct virtio_dev *d, unsigned int q)
{
	if (q >= NQ || !d->ready[q])
		abort();
	virtio_dev__signal_used(d, q);
}

static void fake_reset(struct virtio_dev *d)
{
}

static const struct virtio_dev_ops fake_ops = {
	.config_read = fake_config_read,
	.activate = fake_activate,
	.notify = fake_notify,
	.reset = fake_reset,
};

static void send_msi(void *opaque, uint64_t addr, uint32_t msg)
{
	if ((addr & 0xfffffffffff00000ULL) != 0xfee00000ULL)
		abort();
}

enum { CFG_READ, CFG_WRITE, BAR_READ, BAR_WRITE };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned int widths[] = { 1, 2, 4, 8 };
	struct virtq_mem mem = { .translate = translate };
	struct pci_host *host = pci_host__create();
	struct virtio_pci *vp;
	size_t i;

	vdev = (struct virtio_dev) {
		.device_id = VIRTIO_ID_BLOCK,
		.features = 1ULL << VIRTIO_F_VERSION_1 |
			    1ULL << VIRTIO_RING_F_EVENT_IDX,
		.num_queues = NQ,
		.queue_max = 16,
		.config_size = 32,
		.ops = &fake_ops,
	};
	vp = virtio_pci__create(&vdev, &mem, BAR_ADDR, send_msi, NULL);
	if (!host || !vp || pci_host__add(host, virtio_pci__func(vp)) != 1)
		abort();
	/* Decoding on, as Linux leaves it; the input may turn it off. */
	pci_func__write(virtio_pci__func(vp), PCI_COMMAND, 2,
			PCI_COMMAND_MEMORY);
	for (i = 0; i + 8 <= size; i += 8) {
		const uint8_t *a = data + i;
		unsigned int kind = a[0] & 3, len = widths[(a[0] >> 2) & 3];
		uint16_t off;
		uint64_t v = 0;
		uint32_t val;

		memcpy(&off, a + 2, sizeof(off));
		memcpy(&val, a + 4, sizeof(val));
		v = val;
		switch (kind) {
		case CFG_READ:
		case CFG_WRITE:
			/* Port I/O is 1, 2 or 4 bytes inside the 8 ports. */
			if (len == 8)
				len = 4;
			off %= PORT_PCI_CONF1_LEN - len + 1;
			if (kind == CFG_READ)
				pci_host__conf1_ops.read(host, off, &v, len);
			else
				pci_host__conf1_ops.write(host, off, &v, len);
			break;
		case BAR_READ:
		case BAR_WRITE:
			off %= VIRTIO_PCI_BAR_SIZE - len + 1;
			if (kind == BAR_READ)
				virtio_pci__bar_ops.read(vp, off, &v, len);
			else
				virtio_pci__bar_ops.write(vp, off, &v, len);
			break;
		}
		if (a[1] < NQ)
			virtio_dev__signal_used(&vdev, a[1]);
	}
	virtio_pci__destroy(vp);
	pci_host__destroy(host);
	return 0;
}
