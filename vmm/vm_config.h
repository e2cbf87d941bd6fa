/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a VM is: the one description every front end fills (the command
 * line in options.c, a libvirt domain in config/, vm.create in api/) and
 * vm__boot() runs.  Plain data: no front end formats text for another to
 * parse again, and tests build one without a VM.
 */
#ifndef GPIN_VM_CONFIG_H
#define GPIN_VM_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/layout.h"

#define VM_CPUS_MAX		64
#define DEFAULT_CMDLINE		"console=ttyS0"
#define DEFAULT_MEM		(256ULL << 20)
/* Disks; a virtio-mmio one takes one of the IOAPIC's GSIs 16..23. */
#define VM_DISKS_MAX		8
#define DISK_QUEUES_MAX		64
/* Limits of the rate and poll options (and of <iotune>). */
#define DISK_IOPS_MAX		1000000000ULL
#define DISK_BPS_MAX		(1ULL << 50)
#define DISK_POLL_US_MAX	100000

/* Who pins the guest's buffers for a disk's direct I/O. */
enum disk_pin {
	DISK_PIN_DEFAULT,	/* fast when /dev/gpin opens, else kernel */
	DISK_PIN_KERNEL,	/* io_uring: the host kernel's own GUP */
	DISK_PIN_FAST,		/* gpin.ko, fast path */
	DISK_PIN_LOCKED,	/* gpin.ko, mmap-lock path */
	DISK_PIN_REGISTERED,	/* gpin.ko, guest RAM pinned once at start */
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

/*
 * Where a disk setting came from: the route itself (a --disk word, the
 * domain XML), the host-wide defaults file (config/host_defaults.h), or
 * gpin-vmm's built-in default.  The host defaults fill what is still
 * CONFIG_FROM_DEFAULT; --print-config shows the source of each.
 */
enum config_from {
	CONFIG_FROM_DEFAULT,
	CONFIG_FROM_HOST,
	CONFIG_FROM_ROUTE,
};

/* irq_hold=auto: bounded by the queue's own completion latency (default) */
#define DISK_IRQ_HOLD_AUTO	(-1)

struct disk_config {
	char path[PATH_MAX];
	bool ro;
	enum disk_pin pin;
	unsigned int queues;	/* 0: one per vCPU */
	enum disk_io io;
	enum disk_transport transport;
	bool no_event_idx;	/* event_idx=off: VIRTIO_RING_F_EVENT_IDX not offered */
	uint64_t iops;		/* iops=: requests a second, 0: no limit */
	uint64_t bps;		/* bps=: READ/WRITE bytes a second, 0: no limit */
	unsigned int poll_us;	/* poll=: look again at a busy queue, 0: off */
	int irq_hold_us;	/* irq_hold=: DISK_IRQ_HOLD_AUTO, 0 (off) or US */
	enum config_from pin_from, io_from, transport_from;
	char pin_why[96];	/* how the default pin= was settled */
};

/* Where the guest's UART goes. */
enum vm_console {
	VM_CONSOLE_STDIO,	/* this terminal: input and output */
	VM_CONSOLE_PTY,		/* a new pseudo-terminal */
	VM_CONSOLE_STDOUT,	/* output on stdout, no input */
	VM_CONSOLE_OFF,		/* output dropped */
};

struct vm_config {
	char kernel[PATH_MAX];		/* a bzImage */
	char initrd[PATH_MAX];		/* "": none */
	char cmdline[CMDLINE_MAX];
	unsigned int ncpus;
	uint64_t mem_size;
	bool mem_locked;		/* mlock guest RAM */
	enum vm_console console;
	struct disk_config disks[VM_DISKS_MAX];
	unsigned int ndisks;
	/* Test hooks and benchmark aids: off unless asked for. */
	bool test_exit_port;		/* PORT_EXIT ends the VMM (tests) */
	unsigned int churn_kib;		/* an mmap/munmap thread (vm_churn.c) */
	unsigned int churn_hz;		/* its cycles per second, 0: flat out */
};

/* The built-in defaults: one vCPU, DEFAULT_MEM, DEFAULT_CMDLINE, stdio. */
void vm_config__init(struct vm_config *cfg);
void disk_config__init(struct disk_config *d);

/*
 * Copies @src into a @size-byte field of a config; 0, or -1 with
 * "@what: too long" in @err.
 */
int vm_config__set_string(char *field, size_t size, const char *src,
			  const char *what, char *err, size_t errlen);

/*
 * The words of pin=, io= (service= in XML and vmm.conf) and transport=,
 * one table each for every route (the command line, the domain XML, the
 * host defaults file): NULL-terminated, in the order of their enum, "" for
 * a value no route may name (DISK_PIN_DEFAULT).  A *_EXPECT string says
 * them for messages.
 */
extern const char *const disk_pin_words[];
extern const char *const disk_io_words[];
extern const char *const disk_transport_words[];
#define DISK_PIN_EXPECT		"fast, locked, registered or kernel"
#define DISK_IO_EXPECT		"vcpu or iothread"
#define DISK_TRANSPORT_EXPECT	"mmio or pci"

/*
 * Settles what the disks left to gpin-vmm, once, before anything prints or
 * uses the configuration: pin= becomes fast where this process can open
 * /dev/gpin for real (as the disk's queues will), else kernel, with the
 * reason in pin_why (and a line on stderr).  Only DISK_PIN_DEFAULT is
 * touched: calling it again changes nothing.
 */
void vm_config__resolve(struct vm_config *cfg);

/*
 * Whether some disk has pin=registered: then the VM pins its RAM once, at
 * start, for all of them (vm_pinned_ram.h).
 */
bool vm_config__registers_ram(const struct vm_config *cfg);

/* The index of @word in @words, or -1 ("" never matches). */
int config__word(const char *const *words, const char *word);

const char *disk_pin__name(enum disk_pin pin);
const char *disk_io__name(enum disk_io io);
const char *disk_transport__name(enum disk_transport t);
const char *config_from__name(enum config_from from);

#endif /* GPIN_VM_CONFIG_H */
