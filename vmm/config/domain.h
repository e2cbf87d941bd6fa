/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A libvirt domain definition (<domain type='kvm'>) as gpin-vmm's
 * configuration.
 *
 * domain__parse() is pure: XML text in, struct domain out.  It parses
 * with libxml2, validates against libvirt's own RelaxNG schema, then
 * walks the tree against a table of what gpin-vmm supports: every element
 * and attribute it does not know is an error naming it (with its line),
 * never silently dropped.  What libvirt has no word for (the pinning mode
 * of a disk, which thread serves its queues) lives in <metadata>, in
 * gpin's namespace DOMAIN_GPIN_NS:
 *
 *   <metadata>
 *     <gpin:vmm xmlns:gpin="https://gpin.example/xmlns/domain/1">
 *       <gpin:disk target="vda" pin="fast" service="iothread"/>
 *       <gpin:test-exit-port/>
 *     </gpin:vmm>
 *   </metadata>
 *
 * (<gpin:test-exit-port/>: --test-exit-port, for tests that boot a
 * domain.) *
 * Elements of other namespaces in <metadata> belong to other programs and
 * are left alone.  domain__check_host() is the part that looks at the
 * host: disk paths exist and are of the declared type.
 */
#ifndef GPIN_CONFIG_DOMAIN_H
#define GPIN_CONFIG_DOMAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vm_config.h"

#define DOMAIN_GPIN_NS		"https://gpin.example/xmlns/domain/1"
/* libvirt's schema as Debian installs it (package libvirt0). */
#define DOMAIN_SCHEMA_DEFAULT	"/usr/share/libvirt/schemas/domain.rng"
/* Overrides DOMAIN_SCHEMA_DEFAULT (other distributions, a private libvirt). */
#define DOMAIN_SCHEMA_ENV	"GPIN_DOMAIN_SCHEMA"
#define DOMAIN_DISKS_MAX	8
#define DOMAIN_QUEUES_MAX	64
#define DOMAIN_XML_MAX		(1U << 20)

enum domain_disk_type {
	DOMAIN_DISK_FILE,	/* <disk type='file'><source file=…> */
	DOMAIN_DISK_BLOCK,	/* <disk type='block'><source dev=…> */
};

/* <driver io=…>: how the host side does the direct I/O. */
enum domain_disk_aio {
	DOMAIN_AIO_DEFAULT,	/* no io attribute: native */
	DOMAIN_AIO_NATIVE,	/* asynchronous direct I/O, pin per metadata */
	DOMAIN_AIO_IO_URING,	/* io_uring: the host kernel pins */
	DOMAIN_AIO_THREADS,	/* served by per-queue I/O threads */
};

/* <disk><address type=…>: the disk's virtio transport. */
enum domain_disk_bus {
	DOMAIN_BUS_DEFAULT,	/* no <address>: the VMM's default */
	DOMAIN_BUS_VIRTIO_MMIO,	/* type='virtio-mmio' */
	DOMAIN_BUS_PCI,		/* type='pci' */
};

struct domain_disk {
	enum domain_disk_type type;
	char *path;		/* source file= or dev= */
	char *target;		/* target dev=, "vda" */
	bool readonly;
	enum domain_disk_aio aio;
	unsigned int queues;	/* 0: the VMM's default (one per vCPU) */
	bool no_event_idx;	/* <driver event_idx='off'> */
	uint64_t iops;		/* <iotune><total_iops_sec>, 0: none */
	uint64_t bps;		/* <iotune><total_bytes_sec>, 0: none */
	enum domain_disk_bus bus;	/* <address type=…> */
	/*
	 * gpin:disk pin=… (or io='io_uring': kernel); DISK_PIN_DEFAULT when
	 * neither says, which the host defaults or kernel fill.
	 */
	enum disk_pin pin;
	enum disk_io service;	/* gpin:disk service=…, io='threads' */
	bool service_set;	/* ... when one of them says */
};

/* Where the guest's UART goes. */
enum domain_console {
	DOMAIN_CONSOLE_STDIO,	/* no <serial>/<console>: the VMM's terminal */
	DOMAIN_CONSOLE_PTY,	/* type='pty': a new pseudo-terminal */
};

/* <on_poweroff>, <on_reboot>, <on_crash>: only "destroy" is served. */
enum domain_action {
	DOMAIN_ACTION_DESTROY,	/* the VMM exits with the guest's status */
};

struct domain {
	char *name;
	uint64_t mem_bytes;
	unsigned int vcpus;
	char *kernel;
	char *initrd;		/* NULL: none */
	char *cmdline;		/* NULL: none given */
	char *emulator;		/* <devices><emulator>, informational */
	bool mem_locked;	/* <memoryBacking><locked/> */
	enum domain_console console;
	enum domain_action on_poweroff, on_reboot, on_crash;
	struct domain_disk disks[DOMAIN_DISKS_MAX];
	unsigned int ndisks;
	bool test_exit_port;	/* <gpin:test-exit-port/> */
};

/*
 * Parses and validates @len bytes of domain XML into @d.  @schema is the
 * RelaxNG schema to validate against (NULL: skip validation, for callers
 * that validated already).  @name names the document in messages.
 * Returns 0, or -1 with a one-line reason in @err (then @d holds nothing
 * to free).
 */
int domain__parse(struct domain *d, const char *xml, size_t len,
		  const char *name, const char *schema, char *err,
		  size_t errlen);

/* Reads @path (at most DOMAIN_XML_MAX bytes) and parses it. */
int domain__load(struct domain *d, const char *path, const char *schema,
		 char *err, size_t errlen);

/* The schema to use: $GPIN_DOMAIN_SCHEMA or DOMAIN_SCHEMA_DEFAULT. */
const char *domain__schema_path(void);

/*
 * Checks what the domain names on the host: each disk's path exists and
 * is a regular file (type='file') or a block device (type='block').
 */
int domain__check_host(const struct domain *d, char *err, size_t errlen);

void domain__free(struct domain *d);

const char *domain__aio_name(enum domain_disk_aio aio);

#endif /* GPIN_CONFIG_DOMAIN_H */
