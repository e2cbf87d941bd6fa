/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One virtual machine: the KVM VM file descriptor, guest RAM (a single
 * anonymous mapping, so pinning sees ordinary anonymous pages), the buses
 * devices hang off, and the vCPU threads.
 */
#ifndef GPIN_VM_H
#define GPIN_VM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "bus.h"
#include "counters.h"
#include "devices/exit_port.h"
#include "devices/i8042.h"
#include "devices/rtc.h"
#include "vm_config.h"
#include "vm_run.h"
#include "devices/serial.h"

struct vcpu;
struct kvm_run;
struct virtio_blk;
struct virtio_mmio;
struct virtio_pci;
struct pci_host;
struct acpi_pm;
struct pvpanic;
struct boot_files;
struct vm_churn;
struct vm_pinned_ram;

struct vm {
	int kvm_fd;
	int vm_fd;
	int vcpu_mmap_size;

	uint8_t *ram;		/* guest RAM, host view */
	uint64_t ram_size;	/* bytes of guest RAM */
	uint64_t lowmem_size;	/* RAM below MMIO_HOLE_START */
	/* pin=registered: RAM pinned once for the disks, or NULL */
	struct vm_pinned_ram *pinned_ram;

	struct bus pio;
	struct bus mmio;

	unsigned int ncpus;
	struct vcpu **vcpus;

	struct vm_run run;	/* stopping and pausing (vm_run.h) */

	struct serial *serial;
	struct i8042 kbd;
	struct exit_port exit_port;	/* attached with --test-exit-port */
	struct rtc rtc;
	struct acpi_pm *acpi_pm;
	struct pvpanic *pvpanic;

	/*
	 * --disk i: a virtio-blk device on its transport, virtio-mmio or
	 * virtio-pci (one of the two pointers is set).  The PCI host bridge
	 * exists when some disk is on PCI.
	 */
	unsigned int ndisks;
	struct virtio_blk *disks[VM_DISKS_MAX];
	struct virtio_mmio *disk_mmio[VM_DISKS_MAX];
	struct virtio_pci *disk_pci[VM_DISKS_MAX];
	struct pci_host *pci;
	unsigned int npci;
	bool msi_failed;	/* a KVM_SIGNAL_MSI failed (reported once) */

	struct vm_churn *churn;		/* --churn (vm_churn.c), or NULL */
};

/*
 * Builds and starts the VM @cfg describes, as every front end does (the
 * command line and --domain in main.c, vm.boot in api/run.c): maps the
 * kernel and initrd and checks the kernel, creates the machine, locks
 * guest RAM when asked, loads the guest, unmaps the images (guest RAM
 * holds them now) and starts the vCPUs.  @console is where the UART's
 * output goes.  Returns 0; -ENOEXEC when the images cannot boot
 * (unreadable, not a bzImage, too large for guest RAM: a bad
 * configuration), or another -errno when the VMM failed; the reason in
 * @err.  On failure @vm holds nothing to destroy.
 */
int vm__boot(struct vm *vm, const struct vm_config *cfg,
	     const struct serial_backend *console, char *err, size_t errlen);

/*
 * vm__boot()'s steps.  vm__create() opens KVM and builds the machine:
 * RAM, irqchip, PIT, legacy devices, disks and the vCPUs; 0 or -errno
 * with the reason in @err (then @vm is destroyed already).
 */
int vm__create(struct vm *vm, const struct vm_config *cfg,
	       const struct serial_backend *console, char *err, size_t errlen);
/* Loads kernel, initrd, command line and ACPI tables; 0 or -1 with @err. */
int vm__load(struct vm *vm, const struct boot_files *files, char *err,
	     size_t errlen);
void vm__destroy(struct vm *vm);
/*
 * SIGUSR1: the disks' counters as at exit and their rings' state, each
 * vCPU's exits and place; the vCPU threads then print their registers.
 */
void vm__print_state(const struct vm *vm);
/*
 * Starts the churn thread, if any, and the vCPU threads; 0 or -errno (a
 * stop is requested then).  vm__join() ends them.
 */
int vm__start(struct vm *vm);
/* Stops and joins every vCPU thread, then prints the disks' counters. */
void vm__join(struct vm *vm);

/*
 * The disks' counters, one "blkN-qM: ..." line per queue: what vm__join()
 * prints, and what SIGUSR1 prints while the VM runs.
 */
void vm__print_disk_stats(const struct vm *vm, FILE *out);
/* Every counter of the VM's devices (vm.counters); safe while it runs. */
void vm__counters(const struct vm *vm, counter_fn fn, void *opaque);

#endif /* GPIN_VM_H */
