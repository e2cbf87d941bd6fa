/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Command-line options of gpin-vmm, parsed into a plain struct so the
 * parser can be tested without a VM.
 */
#ifndef GPIN_OPTIONS_H
#define GPIN_OPTIONS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "log.h"

#define VM_CPUS_MAX		64
#define DEFAULT_CMDLINE		"console=ttyS0"
#define DEFAULT_MEM		(256ULL << 20)
/* Disks; a virtio-mmio one takes one of the IOAPIC's GSIs 16..23. */
#define VM_DISKS_MAX		8
#define DISK_QUEUES_MAX		64

/* Who pins the guest's buffers for a disk's direct I/O. */
enum disk_pin {
	DISK_PIN_DEFAULT,	/* fast when /dev/gpin exists, else kernel */
	DISK_PIN_KERNEL,	/* io_uring: the host kernel's own GUP */
	DISK_PIN_FAST,		/* gpin.ko, fast path */
	DISK_PIN_LOCKED,	/* gpin.ko, mmap-lock path */
};

/* Which thread takes a queue's requests. */
enum disk_io {
	DISK_IO_VCPU,		/* the notifying vCPU */
	DISK_IO_IOTHREAD,	/* the queue's own thread, via ioeventfd */
};

/* How the guest reaches a disk's virtio device. */
enum disk_transport {
	DISK_TRANSPORT_MMIO,	/* virtio-mmio, one IOAPIC line (default) */
	DISK_TRANSPORT_PCI,	/* virtio-pci on bus 0, MSI-X per queue */
};

struct disk_options {
	char path[PATH_MAX];
	bool ro;
	enum disk_pin pin;
	unsigned int queues;	/* 0: one per vCPU */
	enum disk_io io;
	enum disk_transport transport;
	bool no_event_idx;	/* event_idx=off: VIRTIO_RING_F_EVENT_IDX not offered */
};

struct vm_options {
	const char *kernel;
	const char *initrd;
	const char *cmdline;
	unsigned int ncpus;
	uint64_t mem_size;
	struct disk_options disks[VM_DISKS_MAX];
	unsigned int ndisks;
	unsigned int churn_kib;	/* --churn: mmap/munmap loop (benchmark aid) */
	unsigned int churn_hz;	/* its cycles per second, 0: flat out */
	bool mem_locked;	/* mlock guest RAM (domain <memoryBacking><locked/>) */
	bool console_pty;	/* UART on a new PTY, not stdio (domain type='pty') */
	const char *domain;	/* --domain: the VM is a libvirt domain XML */
	bool print_config;	/* --print-config: print the settings, exit */
	int api_fd;		/* --api-socket fd=N (listening), or -1 */
	const char *api_path;	/* --api-socket path=P, or NULL */
	enum log_level log_level;	/* --quiet, --verbose */
	bool help;
	bool version;
};

/*
 * Parses argv into @opts.  Returns 0, or -1 with a one-line reason in
 * @err (the caller prints it and exits with status 2).
 */
int options__parse(struct vm_options *opts, int argc, char **argv,
		   char *err, size_t errlen);

/* "512M", "2G", "1048576K", "300" (MiB); 0 on success, -1 on bad input. */
int options__parse_size(const char *s, uint64_t *bytes);

/*
 * One --disk value, "path[,ro][,pin=fast|locked|kernel][,queues=N]
 * [,io=vcpu|iothread][,event_idx=on|off][,transport=mmio|pci]"; 0, or -1 with a reason in @err.
 */
int options__parse_disk(const char *s, struct disk_options *d, char *err,
			size_t errlen);

void options__usage(FILE *out, const char *prog);

#endif /* GPIN_OPTIONS_H */
