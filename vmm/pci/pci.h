/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The configuration space of one PCI function (a type-0 header, 256
 * bytes, conventional PCI): what the host bridge reads and writes on the
 * guest's behalf, and what the function's owner (a transport) builds.
 *
 * The space is a byte array and a write mask: the guest changes only the
 * bits the mask lets through, so read-only fields (ids, class, the
 * capability list) need no code.  Two things do:
 *  - BARs.  The VMM places every BAR (memory, 32-bit) at a fixed address
 *    in the MMIO hole and decodes it there only.  A BAR register accepts
 *    the all-ones sizing write (and reads back its size mask) and the
 *    address it already holds; any other address is refused - the
 *    register goes back to the fixed one - so a guest can neither move a
 *    BAR onto RAM or another device nor make us juggle bus ranges.  Linux
 *    keeps the addresses firmware assigned when they fit the host
 *    bridge's window and clash with nothing, which ours do.
 *  - The owner's registers inside capabilities (MSI-X control), which a
 *    write callback learns of after the mask is applied.
 *
 * Not locked: the host bridge serialises configuration accesses.
 */
#ifndef GPIN_PCI_H
#define GPIN_PCI_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/pci_regs.h>

#define PCI_CFG_SIZE		256
#define PCI_NUM_BARS		6
/* Capabilities start after the type-0 header. */
#define PCI_CAP_START		0x40

struct pci_func;

/* Called after the guest wrote [off, off + len) of the config space. */
typedef void (*pci_cfg_written_fn)(void *opaque, struct pci_func *f,
				   unsigned int off, unsigned int len);

struct pci_func {
	uint8_t cfg[PCI_CFG_SIZE];
	uint8_t wmask[PCI_CFG_SIZE];	/* bits the guest may change */
	uint32_t bar_size[PCI_NUM_BARS];	/* 0: no BAR */
	uint32_t bar_addr[PCI_NUM_BARS];	/* where the VMM put it */
	/* BAR i decodes at bar_addr[i] now; read by vCPUs without a lock. */
	bool decodes[PCI_NUM_BARS];
	unsigned int cap_end;	/* first free byte for a capability */
	unsigned int cap_link;	/* offset of the last next pointer */
	pci_cfg_written_fn written;
	void *opaque;
};

/*
 * A function with these ids, class (base, sub, prog-if) and no BAR or
 * capability yet; memory decoding off, as after a PCI reset.
 */
void pci_func__init(struct pci_func *f, uint16_t vendor, uint16_t device,
		    uint32_t class_code, uint8_t revision);
void pci_func__set_subsystem(struct pci_func *f, uint16_t vendor,
			     uint16_t id);

/*
 * A 32-bit, non-prefetchable memory BAR of @size bytes (a power of two,
 * at least 16) at @addr (aligned to @size).  0 or -EINVAL.
 */
int pci_func__set_bar(struct pci_func *f, unsigned int bar, uint32_t addr,
		      uint32_t size);

/*
 * Appends a capability: @len bytes of @body (its id first, the next
 * pointer byte is filled in), dword-aligned.  Returns its offset, or 0
 * when it does not fit.  The bytes are read-only until the caller opens
 * some of them with pci_func__set_wmask().
 */
unsigned int pci_func__add_cap(struct pci_func *f, const void *body,
			       unsigned int len);
void pci_func__set_wmask(struct pci_func *f, unsigned int off,
			 const void *mask, unsigned int len);

/*
 * A configuration access of @len (1, 2 or 4) bytes at @off, which the
 * host bridge has checked to lie inside one dword of the space.
 */
uint32_t pci_func__read(const struct pci_func *f, unsigned int off,
			unsigned int len);
void pci_func__write(struct pci_func *f, unsigned int off, unsigned int len,
		     uint32_t val);

/* Whether BAR @bar decodes at its address now (memory decode on). */
bool pci_func__bar_decodes(const struct pci_func *f, unsigned int bar);

#endif /* GPIN_PCI_H */
