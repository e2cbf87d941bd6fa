// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>

#include "pci/pci.h"

/* Command bits a guest may set: no I/O space, no INTx to enable. */
#define PCI_CMD_WRITABLE	(PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | \
				 PCI_COMMAND_INTX_DISABLE)

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v);
	put16(p + 2, v >> 16);
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

void pci_func__init(struct pci_func *f, uint16_t vendor, uint16_t device,
		    uint32_t class_code, uint8_t revision)
{
	memset(f, 0, sizeof(*f));
	put16(f->cfg + PCI_VENDOR_ID, vendor);
	put16(f->cfg + PCI_DEVICE_ID, device);
	f->cfg[PCI_REVISION_ID] = revision;
	f->cfg[PCI_CLASS_PROG] = class_code;
	put16(f->cfg + PCI_CLASS_DEVICE, class_code >> 8);
	f->cfg[PCI_HEADER_TYPE] = PCI_HEADER_TYPE_NORMAL;
	put16(f->wmask + PCI_COMMAND, PCI_CMD_WRITABLE);
	/* A scratch byte for the OS; the pin stays 0: no INTx. */
	f->wmask[PCI_INTERRUPT_LINE] = 0xff;
	f->cap_end = PCI_CAP_START;
	f->cap_link = PCI_CAPABILITY_LIST;
}

void pci_func__set_subsystem(struct pci_func *f, uint16_t vendor,
			     uint16_t id)
{
	put16(f->cfg + PCI_SUBSYSTEM_VENDOR_ID, vendor);
	put16(f->cfg + PCI_SUBSYSTEM_ID, id);
}

static unsigned int bar_reg(unsigned int bar)
{
	return PCI_BASE_ADDRESS_0 + 4 * bar;
}

int pci_func__set_bar(struct pci_func *f, unsigned int bar, uint32_t addr,
		      uint32_t size)
{
	if (bar >= PCI_NUM_BARS || size < 16 || (size & (size - 1)) ||
	    !addr || (addr & (size - 1)))
		return -EINVAL;
	f->bar_size[bar] = size;
	f->bar_addr[bar] = addr;
	/* Memory space, 32-bit, not prefetchable: the low bits are all 0. */
	put32(f->cfg + bar_reg(bar), addr);
	put32(f->wmask + bar_reg(bar), ~(size - 1));
	return 0;
}

unsigned int pci_func__add_cap(struct pci_func *f, const void *body,
			       unsigned int len)
{
	unsigned int off = (f->cap_end + 3) & ~3u;

	if (len < 2 || off > PCI_CFG_SIZE || len > PCI_CFG_SIZE - off)
		return 0;
	memcpy(f->cfg + off, body, len);
	f->cfg[off + PCI_CAP_LIST_NEXT] = 0;
	f->cfg[f->cap_link] = off;
	f->cap_link = off + PCI_CAP_LIST_NEXT;
	f->cap_end = off + len;
	f->cfg[PCI_STATUS] |= PCI_STATUS_CAP_LIST;
	return off;
}

void pci_func__set_wmask(struct pci_func *f, unsigned int off,
			 const void *mask, unsigned int len)
{
	if (off < PCI_CFG_SIZE && len <= PCI_CFG_SIZE - off)
		memcpy(f->wmask + off, mask, len);
}

uint32_t pci_func__read(const struct pci_func *f, unsigned int off,
			unsigned int len)
{
	uint32_t v = 0;
	unsigned int i;

	for (i = 0; i < len && off + i < PCI_CFG_SIZE; i++)
		v |= (uint32_t)f->cfg[off + i] << (8 * i);
	return v;
}

/*
 * After a write into BAR @bar's register: keep the sizing pattern or the
 * VMM's address, refuse anything else (see pci.h), then decide whether
 * the BAR decodes.
 */
static void bar_update(struct pci_func *f, unsigned int bar)
{
	uint8_t *reg = f->cfg + bar_reg(bar);
	uint32_t size_mask = ~(f->bar_size[bar] - 1), v = get32(reg);

	if (v != size_mask && v != f->bar_addr[bar])
		put32(reg, f->bar_addr[bar]);
}

static void decode_update(struct pci_func *f)
{
	bool mem = f->cfg[PCI_COMMAND] & PCI_COMMAND_MEMORY;
	unsigned int i;

	for (i = 0; i < PCI_NUM_BARS; i++)
		__atomic_store_n(&f->decodes[i], mem && f->bar_size[i] &&
				 get32(f->cfg + bar_reg(i)) == f->bar_addr[i],
				 __ATOMIC_RELEASE);
}

void pci_func__write(struct pci_func *f, unsigned int off, unsigned int len,
		     uint32_t val)
{
	unsigned int i, o;

	for (i = 0; i < len && off + i < PCI_CFG_SIZE; i++) {
		o = off + i;
		f->cfg[o] = (f->cfg[o] & ~f->wmask[o]) |
			    ((val >> (8 * i)) & f->wmask[o]);
	}
	for (i = 0; i < PCI_NUM_BARS; i++)
		if (f->bar_size[i] && off < bar_reg(i) + 4 &&
		    off + len > bar_reg(i))
			bar_update(f, i);
	decode_update(f);
	if (f->written)
		f->written(f->opaque, f, off, len);
}

bool pci_func__bar_decodes(const struct pci_func *f, unsigned int bar)
{
	return bar < PCI_NUM_BARS &&
	       __atomic_load_n(&f->decodes[bar], __ATOMIC_ACQUIRE);
}
