/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Host-wide defaults for gpin-vmm, as libvirt's qemu.conf is for QEMU: a
 * file an administrator writes once, read by every route (the command
 * line, --domain, the API libvirt's ch driver drives), whose settings
 * apply where the route itself says nothing.
 *
 *   # /etc/gpin/vmm.conf
 *   pin = "fast"            # fast | locked | kernel: who pins a disk's buffers
 *   service = "iothread"    # vcpu | iothread: which thread serves its queues
 *   transport = "pci"       # mmio | pci: how the guest reaches the disk
 *
 * One "key = value" a line, the value bare or in double quotes; '#'
 * starts a comment; blank lines are fine.  Anything else is an error
 * naming the file and line.  GPIN_VMM_CONF names another file (libvirt
 * runs its VMMs with a scrubbed environment: on that route the file at
 * the default path is the one that counts).
 */
#ifndef GPIN_CONFIG_HOST_DEFAULTS_H
#define GPIN_CONFIG_HOST_DEFAULTS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "vm_config.h"

#define HOST_DEFAULTS_PATH	"/etc/gpin/vmm.conf"
#define HOST_DEFAULTS_ENV	"GPIN_VMM_CONF"
#define HOST_DEFAULTS_MAX	(64U << 10)	/* bytes of file read */

struct host_defaults {
	char path[PATH_MAX];	/* the file looked at */
	bool found;		/* it exists (an empty file sets nothing) */
	/* Each setting and its line; line 0: the file does not set it. */
	enum disk_pin pin;
	unsigned int pin_line;
	enum disk_io io;
	unsigned int io_line;
	enum disk_transport transport;
	unsigned int transport_line;
};

/*
 * Parses @len bytes of a defaults file named @name into @h; pure.  0, or
 * -1 with "NAME:LINE: reason" in @err.
 */
int host_defaults__parse(struct host_defaults *h, const char *text,
			 size_t len, const char *name, char *err,
			 size_t errlen);

/* The file to read: $GPIN_VMM_CONF when set and not empty, else the default. */
const char *host_defaults__path(void);

/*
 * Reads @path into @h.  A missing file at HOST_DEFAULTS_PATH is no error
 * (no defaults); one that $GPIN_VMM_CONF names is (@explicit).  0, or -1
 * with the reason in @err.
 */
int host_defaults__load(struct host_defaults *h, const char *path,
			bool explicit, char *err, size_t errlen);

/*
 * Fills every setting of @cfg's disks that the route left to the
 * defaults (disk_config's *_from is CONFIG_FROM_DEFAULT) from @h.
 */
void host_defaults__apply(const struct host_defaults *h,
			  struct vm_config *cfg);

/* One line for --print-config: the file and what it sets. */
void host_defaults__print(FILE *out, const struct host_defaults *h);

#endif /* GPIN_CONFIG_HOST_DEFAULTS_H */
