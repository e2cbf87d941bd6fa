// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/layout.h"
#include "pci/msix.h"

/* Offsets in the capability: message control, table, PBA. */
#define MSIX_CTRL_OFF		2
#define MSIX_TABLE_OFF		4
#define MSIX_PBA_OFF		8

uint32_t msix__table_bytes(unsigned int nvec)
{
	return nvec * MSIX_ENTRY_SIZE;
}

uint32_t msix__pba_bytes(unsigned int nvec)
{
	return (nvec + 63) / 64 * 8;
}

int msix__init(struct msix *m, unsigned int nvec, msix_send_fn send,
	       void *opaque)
{
	unsigned int i;

	memset(m, 0, sizeof(*m));
	if (!nvec || nvec > MSIX_MAX_VECTORS)
		return -EINVAL;
	m->table = calloc(nvec, sizeof(*m->table));
	m->pba = calloc(msix__pba_bytes(nvec) / 8, sizeof(*m->pba));
	if (!m->table || !m->pba) {
		free(m->table);
		free(m->pba);
		return -ENOMEM;
	}
	/* Every entry starts masked (6.8.2.9). */
	for (i = 0; i < nvec; i++)
		m->table[i].ctrl = PCI_MSIX_ENTRY_CTRL_MASKBIT;
	m->nvec = nvec;
	m->send = send;
	m->opaque = opaque;
	pthread_mutex_init(&m->lock, NULL);
	return 0;
}

void msix__exit(struct msix *m)
{
	if (!m->table)
		return;
	pthread_mutex_destroy(&m->lock);
	free(m->table);
	free(m->pba);
	m->table = NULL;
	m->pba = NULL;
}

int msix__add_cap(struct msix *m, struct pci_func *f, unsigned int bar,
		  uint32_t table_off, uint32_t pba_off)
{
	uint8_t cap[MSIX_CAP_LEN] = { PCI_CAP_ID_MSIX };
	uint16_t ctrl = m->nvec - 1;	/* Table Size is N - 1 */
	uint32_t table = table_off | bar, pba = pba_off | bar;
	/* Only Enable and Function Mask are the guest's to write. */
	uint8_t mask[2] = { 0, (PCI_MSIX_FLAGS_ENABLE |
				PCI_MSIX_FLAGS_MASKALL) >> 8 };

	if (bar >= PCI_NUM_BARS || (table_off & 7) || (pba_off & 7))
		return -EINVAL;
	memcpy(cap + MSIX_CTRL_OFF, &ctrl, sizeof(ctrl));
	memcpy(cap + MSIX_TABLE_OFF, &table, sizeof(table));
	memcpy(cap + MSIX_PBA_OFF, &pba, sizeof(pba));
	m->cap = pci_func__add_cap(f, cap, sizeof(cap));
	if (!m->cap)
		return -ENOSPC;
	pci_func__set_wmask(f, m->cap + MSIX_CTRL_OFF, mask, sizeof(mask));
	return 0;
}

static bool pending(const struct msix *m, unsigned int v)
{
	return m->pba[v / 64] & (1ULL << (v % 64));
}

static void set_pending(struct msix *m, unsigned int v, bool on)
{
	if (on)
		m->pba[v / 64] |= 1ULL << (v % 64);
	else
		m->pba[v / 64] &= ~(1ULL << (v % 64));
}

static bool vector_masked(const struct msix *m, unsigned int v)
{
	return m->masked || (m->table[v].ctrl & PCI_MSIX_ENTRY_CTRL_MASKBIT);
}

/* Called with @lock held, @v < nvec, MSI-X enabled. */
static void send_vector(struct msix *m, unsigned int v)
{
	const struct msix_entry *e = &m->table[v];

	if (vector_masked(m, v)) {
		set_pending(m, v, true);
		return;
	}
	set_pending(m, v, false);
	if (e->addr_hi ||
	    (e->addr_lo & MSI_ADDR_WINDOW_MASK) != MSI_ADDR_WINDOW)
		return;
	m->send(m->opaque, e->addr_lo, e->data);
}

/* After an unmask: what was pending and is now unmasked goes out. */
static void flush_pending(struct msix *m)
{
	unsigned int v;

	if (!m->enabled || m->masked)
		return;
	for (v = 0; v < m->nvec; v++)
		if (pending(m, v) && !vector_masked(m, v))
			send_vector(m, v);
}

void msix__cfg_written(struct msix *m, const struct pci_func *f)
{
	uint16_t ctrl = pci_func__read(f, m->cap + MSIX_CTRL_OFF, 2);

	pthread_mutex_lock(&m->lock);
	m->enabled = ctrl & PCI_MSIX_FLAGS_ENABLE;
	m->masked = ctrl & PCI_MSIX_FLAGS_MASKALL;
	flush_pending(m);
	pthread_mutex_unlock(&m->lock);
}

static bool access_ok(uint64_t off, unsigned int len, uint64_t size)
{
	return (len == 4 || len == 8) && !(off & (len - 1)) && off < size &&
	       len <= size - off;
}

void msix__table_read(struct msix *m, uint64_t off, void *data,
		      unsigned int len)
{
	memset(data, 0, len);
	if (!access_ok(off, len, msix__table_bytes(m->nvec)))
		return;
	pthread_mutex_lock(&m->lock);
	memcpy(data, (uint8_t *)m->table + off, len);
	pthread_mutex_unlock(&m->lock);
}

/* A dword of entry @v's at byte @field, with the mask bit's side effect. */
static void entry_write(struct msix *m, unsigned int v, unsigned int field,
			uint32_t val)
{
	struct msix_entry *e = &m->table[v];

	switch (field) {
	case PCI_MSIX_ENTRY_LOWER_ADDR:
		e->addr_lo = val;
		break;
	case PCI_MSIX_ENTRY_UPPER_ADDR:
		e->addr_hi = val;
		break;
	case PCI_MSIX_ENTRY_DATA:
		e->data = val;
		break;
	case PCI_MSIX_ENTRY_VECTOR_CTRL:
		e->ctrl = val & PCI_MSIX_ENTRY_CTRL_MASKBIT;
		if (!e->ctrl && pending(m, v) && m->enabled)
			send_vector(m, v);
		break;
	}
}

void msix__table_write(struct msix *m, uint64_t off, const void *data,
		       unsigned int len)
{
	uint32_t val[2];
	unsigned int i;

	if (!access_ok(off, len, msix__table_bytes(m->nvec)))
		return;
	memcpy(val, data, len);
	pthread_mutex_lock(&m->lock);
	for (i = 0; i < len / 4; i++)
		entry_write(m, off / MSIX_ENTRY_SIZE,
			    (off + 4 * i) % MSIX_ENTRY_SIZE, val[i]);
	pthread_mutex_unlock(&m->lock);
}

void msix__pba_read(struct msix *m, uint64_t off, void *data,
		    unsigned int len)
{
	memset(data, 0, len);
	if (!access_ok(off, len, msix__pba_bytes(m->nvec)))
		return;
	pthread_mutex_lock(&m->lock);
	memcpy(data, (uint8_t *)m->pba + off, len);
	pthread_mutex_unlock(&m->lock);
}

void msix__notify(struct msix *m, unsigned int vector)
{
	if (vector >= m->nvec)
		return;
	pthread_mutex_lock(&m->lock);
	if (m->enabled)
		send_vector(m, vector);
	pthread_mutex_unlock(&m->lock);
}
