// SPDX-License-Identifier: GPL-2.0-only
/* pin=registered: guest RAM pinned once per VM (vm_pinned_ram.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "libgpin.h"

#include "log.h"
#include "vm_pinned_ram.h"

#define PINNED_RAM_FLAGS	(GPIN_PIN_WRITE | GPIN_PIN_DIO)

static uint64_t page_size(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

/* What one file can hold: GPIN_MAX_PAGES_PER_FILE of the kernel's pages */
static uint64_t max_bytes(void)
{
	return (uint64_t)GPIN_MAX_PAGES_PER_FILE * page_size();
}

static uint64_t ram_bytes(const struct vm_ram_region *r, unsigned int n)
{
	uint64_t bytes = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		bytes += r[i].size;
	return bytes;
}

static unsigned long long mib(uint64_t bytes)
{
	return bytes >> 20;
}

/* ulimit -l counts KiB */
static unsigned long long kib_up(uint64_t bytes)
{
	return (bytes + 1023) >> 10;
}

/*
 * ENOMEM: RLIMIT_MEMLOCK, unless it is high enough already (or unlimited);
 * then the host is out of memory, or gpin.ko at its max_pins parameter.
 */
static void memlock_why(uint64_t bytes, char *buf, size_t len)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < bytes) {
		snprintf(buf, len, "pin=registered: pinning %llu MiB of guest "
			 "RAM (charged to VmPin) goes past RLIMIT_MEMLOCK, "
			 "%llu KiB: raise it to at least %llu KiB (ulimit -l "
			 "%llu; LimitMEMLOCK= for a systemd unit) or give "
			 "gpin-vmm CAP_IPC_LOCK", mib(bytes),
			 (unsigned long long)rl.rlim_cur >> 10, kib_up(bytes),
			 kib_up(bytes));
		return;
	}
	snprintf(buf, len, "pin=registered: out of memory pinning %llu MiB "
		 "of guest RAM, with RLIMIT_MEMLOCK high enough: the host's "
		 "free memory, or gpin.ko's max_pins parameter", mib(bytes));
}

void vm_pinned_ram__why(int err, uint64_t bytes, char *buf, size_t len)
{
	switch (err) {
	case ENOENT:
		snprintf(buf, len, "pin=registered: no " GPIN_DEVICE_PATH
			 " (gpin.ko not loaded); pin=kernel works without it");
		break;
	case ENOSPC:
		snprintf(buf, len, "pin=registered: %llu MiB of guest RAM is "
			 "more than gpin.ko registers for one VM (%llu MiB): "
			 "give it --mem %lluM or less, or use pin=fast",
			 mib(bytes), mib(max_bytes()), mib(max_bytes()));
		break;
	case ENOMEM:
		memlock_why(bytes, buf, len);
		break;
	default:
		snprintf(buf, len, "pin=registered: registering guest RAM "
			 "with gpin.ko (" GPIN_DEVICE_PATH "): %s%s",
			 strerror(err), err == EINVAL ? " (a gpin.ko older "
			 "than this gpin-vmm has no GPIN_PIN_DIO)" : "");
		break;
	}
}

/*
 * One region in handles of at most GPIN_MAX_PAGES_PER_PIN pages, each
 * recorded as a piece.  The first pin of a page faults it in: guest RAM
 * is all allocated from here on.
 */
static int pin_region(struct vm_pinned_ram *pr, const struct vm_ram_region *r)
{
	uint64_t page = page_size();
	uint64_t left = (r->size + page - 1) / page;
	uintptr_t start = (uintptr_t)r->hva;

	while (left) {
		uint64_t n = left < GPIN_MAX_PAGES_PER_PIN ? left :
			     GPIN_MAX_PAGES_PER_PIN;
		uint32_t handle;

		if (pr->npieces == VM_PINNED_PIECES_MAX)
			return -ENOSPC;
		if (libgpin_pin(pr->g, (const void *)start, n, GPIN_MODE_FAST,
				PINNED_RAM_FLAGS, NULL, &handle, NULL))
			return -errno;
		pr->piece[pr->npieces++] = (struct vm_pinned_piece) {
			start, start + n * page };
		start += n * page;
		left -= n;
	}
	return 0;
}

static int pin_all(struct vm_pinned_ram *pr, const struct vm_ram_region *r,
		   unsigned int n)
{
	unsigned int i;
	int ret = 0;

	pr->g = libgpin_open();
	if (!pr->g)
		return -errno;
	for (i = 0; i < n && !ret; i++)
		ret = pin_region(pr, &r[i]);
	return ret;
}

int vm_pinned_ram__create(struct vm_pinned_ram **prp,
			  const struct vm_ram_region *r, unsigned int n,
			  char *err, size_t errlen)
{
	uint64_t bytes = ram_bytes(r, n);
	struct vm_pinned_ram *pr;
	int ret;

	*prp = NULL;
	/* Said before pinning: the module would say so only at 4 GiB in. */
	if (bytes > max_bytes()) {
		vm_pinned_ram__why(ENOSPC, bytes, err, errlen);
		return -ENOSPC;
	}
	pr = calloc(1, sizeof(*pr));
	if (!pr) {
		err__set(err, errlen, "pin=registered: out of memory");
		return -ENOMEM;
	}
	ret = pin_all(pr, r, n);
	if (ret) {
		vm_pinned_ram__why(-ret, bytes, err, errlen);
		vm_pinned_ram__destroy(pr);
		return ret;
	}
	pr->bytes = bytes;
	pr_info("pin=registered: %llu MiB of guest RAM pinned once for the "
		"VM's disks, %u handles, charged to VmPin", mib(bytes),
		pr->npieces);
	*prp = pr;
	return 0;
}

void vm_pinned_ram__destroy(struct vm_pinned_ram *pr)
{
	if (!pr)
		return;
	libgpin_close(pr->g);
	free(pr);
}

const struct libgpin *vm_pinned_ram__file(const struct vm_pinned_ram *pr)
{
	return pr->g;
}

static bool in_one_piece(const struct vm_pinned_ram *pr, uintptr_t start,
			 size_t len)
{
	unsigned int i;

	for (i = 0; i < pr->npieces; i++) {
		const struct vm_pinned_piece *p = &pr->piece[i];

		if (start >= p->start && start < p->end &&
		    len <= p->end - start)
			return true;
	}
	return false;
}

bool vm_pinned_ram__holds(const struct vm_pinned_ram *pr,
			  const struct iovec *iov, unsigned int niov)
{
	unsigned int i;

	for (i = 0; i < niov; i++)
		if (iov[i].iov_len &&
		    !in_one_piece(pr, (uintptr_t)iov[i].iov_base,
				  iov[i].iov_len))
			return false;
	return true;
}
