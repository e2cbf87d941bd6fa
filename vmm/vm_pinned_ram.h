/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pin=registered: the VM's guest RAM pinned once, when it starts, for
 * every disk and queue that has that pin word (issue 30).
 *
 * One /dev/gpin file holds all of guest RAM as GPIN_PIN_DIO handles:
 * long-term pins (FOLL_LONGTERM) charged to the process's pinned_vm
 * (VmPin) against RLIMIT_MEMLOCK, as RDMA's registered memory is.  A
 * request whose buffers lie inside them says GPIN_DIO_PINNED with this
 * file as its pins_fd, and the module does no pin work for it.  A handle
 * covers at most GPIN_MAX_PAGES_PER_PIN pages (1 GiB), so each RAM region
 * is pinned in pieces; a file holds at most GPIN_MAX_PAGES_PER_FILE pages,
 * so guest RAM can be at most 4 GiB.
 *
 * vm.c creates it before the disks (their backends keep a pointer) and
 * destroys it after them, when no I/O is in flight on its pages.  It does
 * not change once created: the queues' threads look at it without a lock.
 */
#ifndef GPIN_VM_PINNED_RAM_H
#define GPIN_VM_PINNED_RAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <gpin.h>

#include "vm_guest.h"

struct libgpin;

/* One GPIN_PIN_DIO handle: host addresses [start, end). */
struct vm_pinned_piece {
	uintptr_t start;
	uintptr_t end;
};

/* Regions split at most once per GPIN_MAX_PAGES_PER_PIN pages */
#define VM_PINNED_PIECES_MAX \
	(GPIN_MAX_PAGES_PER_FILE / GPIN_MAX_PAGES_PER_PIN + VM_RAM_REGIONS_MAX)

struct vm_pinned_ram {
	struct libgpin *g;		/* holds the pins: requests' pins_fd */
	uint64_t bytes;			/* guest RAM pinned */
	unsigned int npieces;
	struct vm_pinned_piece piece[VM_PINNED_PIECES_MAX];
};

/*
 * Opens /dev/gpin and pins the @n regions of @r there (GPIN_PIN_WRITE |
 * GPIN_PIN_DIO, GPIN_MODE_FAST).  0 and *@prp set, or -errno with the
 * reason in @err (vm_pinned_ram__why()); nothing stays pinned then.
 */
int vm_pinned_ram__create(struct vm_pinned_ram **prp,
			  const struct vm_ram_region *r, unsigned int n,
			  char *err, size_t errlen);
/* Closes the file, which releases every pin; NULL is fine. */
void vm_pinned_ram__destroy(struct vm_pinned_ram *pr);

/* The file a GPIN_DIO_PINNED request names (libgpin_dio_use_pinned()). */
const struct libgpin *vm_pinned_ram__file(const struct vm_pinned_ram *pr);

/*
 * Whether every non-empty buffer of @iov lies inside one piece, as
 * GPIN_DIO_PINNED needs.  Not so for a bounce buffer (not guest RAM), or
 * a guest buffer across a 1 GiB piece boundary.
 */
bool vm_pinned_ram__holds(const struct vm_pinned_ram *pr,
			  const struct iovec *iov, unsigned int niov);

/*
 * Why pin=registered cannot start, for error @err of opening /dev/gpin
 * or pinning @bytes of guest RAM: ENOENT (no gpin.ko), ENOSPC (more than
 * 4 GiB), ENOMEM (RLIMIT_MEMLOCK, with the limit and what it must be).
 */
void vm_pinned_ram__why(int err, uint64_t bytes, char *buf, size_t len);

#endif /* GPIN_VM_PINNED_RAM_H */
