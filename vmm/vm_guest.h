/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the devices reach of the guest: its RAM by guest-physical address
 * and its interrupt lines.  Below the VM itself (vm.c builds the memory
 * and the irqchip these use), so that the devices' set-up (vm_disk.c)
 * and the tests need nothing else of it.
 */
#ifndef GPIN_VM_GUEST_H
#define GPIN_VM_GUEST_H

#include <stdint.h>

struct vm;

/*
 * One stretch of guest RAM, a KVM memory slot: guest-physical address,
 * where the VMM sees it, bytes.
 */
struct vm_ram_region {
	uint64_t gpa;
	void *hva;
	uint64_t size;
};

/* Below the MMIO hole, and past 4 GiB when RAM reaches the hole. */
#define VM_RAM_REGIONS_MAX	2

/*
 * Guest RAM as the guest sees it, into @r[VM_RAM_REGIONS_MAX]; returns how
 * many regions.  KVM's memory slots (vm.c) and the RAM pin=registered
 * pins (vm_pinned_ram.h) come from it; vm_guest__hva() looks up the same
 * layout by address.
 */
unsigned int vm_guest__ram_regions(const struct vm *vm,
				   struct vm_ram_region *r);

/*
 * Host pointer for [gpa, gpa + len) when the whole range is guest RAM,
 * NULL otherwise: the one check every guest-supplied address goes through.
 */
void *vm_guest__hva(struct vm *vm, uint64_t gpa, uint64_t len);

/* Drive a GSI of the in-kernel irqchip to @level; 0 or -errno. */
int vm_guest__set_irq(struct vm *vm, unsigned int irq, int level);

#endif /* GPIN_VM_GUEST_H */
