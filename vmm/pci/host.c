// SPDX-License-Identifier: GPL-2.0-only
/*
 * Locking: the address register and every configuration access are
 * serialised by @lock.  Mechanism #1 is a two-step protocol (address,
 * then data), so a guest racing itself gets what real hardware gives it;
 * the lock only keeps our state consistent.  BAR decoding, which vCPUs
 * check on every BAR access, is published by pci_func without it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/layout.h"
#include "pci/host.h"

/*
 * The host bridge's ids: Red Hat's "QEMU PCIe host bridge", a plain
 * bridge no OS has quirks for.
 */
#define HOST_VENDOR		0x1b36
#define HOST_DEVICE		0x0008
#define HOST_CLASS		0x060000	/* bridge, host bridge */

/* Address register bits: enable, bus, device, function, dword register. */
#define CONF1_EXT_REG	0x0f000000u	/* AMD's extended registers */
#define CONF1_WRITABLE	(PCI_CONF1_ENABLE | CONF1_EXT_REG | 0x00fffffc)
#define CONF1_DATA		4

struct pci_host {
	pthread_mutex_t lock;
	uint32_t addr;
	struct pci_func bridge;
	struct pci_func *slot[PCI_HOST_SLOTS];
	unsigned int nslots;
};

struct pci_host *pci_host__create(void)
{
	struct pci_host *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	pthread_mutex_init(&h->lock, NULL);
	pci_func__init(&h->bridge, HOST_VENDOR, HOST_DEVICE, HOST_CLASS, 0);
	h->slot[0] = &h->bridge;
	h->nslots = 1;
	return h;
}

void pci_host__destroy(struct pci_host *h)
{
	if (!h)
		return;
	pthread_mutex_destroy(&h->lock);
	free(h);
}

int pci_host__add(struct pci_host *h, struct pci_func *f)
{
	if (h->nslots == PCI_HOST_SLOTS)
		return -ENOSPC;
	h->slot[h->nslots] = f;
	return h->nslots++;
}

int pci_host__attach(struct pci_host *h, struct bus *pio)
{
	return bus__register(pio, PORT_PCI_CONF1, PORT_PCI_CONF1_LEN,
			     &pci_host__conf1_ops, h);
}

/*
 * The function a data-port access at @off (4..7) of @len bytes reaches,
 * and the config offset in @reg; NULL when nothing answers.
 */
static struct pci_func *conf1_target(struct pci_host *h, unsigned int off,
				     unsigned int len, unsigned int *reg)
{
	uint32_t a = h->addr;
	unsigned int lane = off - CONF1_DATA;

	if (!(a & PCI_CONF1_ENABLE) || (a & CONF1_EXT_REG) ||
	    lane + len > 4)
		return NULL;
	/* Bus 0 only, function 0 only. */
	if (((a >> 16) & 0xff) || ((a >> 8) & 0x7))
		return NULL;
	*reg = (a & 0xfc) + lane;
	return h->slot[(a >> 11) & 0x1f];
}

static void conf1_read(void *opaque, uint64_t off, void *data,
		       unsigned int len)
{
	struct pci_host *h = opaque;
	struct pci_func *f;
	unsigned int reg;
	uint32_t v = ~0u;

	memset(data, 0xff, len);
	if (len > sizeof(v))
		return;
	pthread_mutex_lock(&h->lock);
	if (off == 0 && len == 4) {
		v = h->addr;
	} else if (off >= CONF1_DATA) {
		f = conf1_target(h, off, len, &reg);
		if (f)
			v = pci_func__read(f, reg, len);
	}
	pthread_mutex_unlock(&h->lock);
	memcpy(data, &v, len);
}

static void conf1_write(void *opaque, uint64_t off, const void *data,
			unsigned int len)
{
	struct pci_host *h = opaque;
	struct pci_func *f;
	unsigned int reg;
	uint32_t v = 0;

	if (len > sizeof(v))
		return;
	memcpy(&v, data, len);
	pthread_mutex_lock(&h->lock);
	if (off == 0 && len == 4) {
		h->addr = v & CONF1_WRITABLE;
	} else if (off >= CONF1_DATA) {
		f = conf1_target(h, off, len, &reg);
		if (f)
			pci_func__write(f, reg, len, v);
	}
	pthread_mutex_unlock(&h->lock);
}

const struct bus_dev_ops pci_host__conf1_ops = {
	.read = conf1_read,
	.write = conf1_write,
};
