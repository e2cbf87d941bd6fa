// SPDX-License-Identifier: GPL-2.0-only
/* What the devices reach of the guest: vm_guest.h. */
#include <errno.h>
#include <sys/ioctl.h>

#include <linux/kvm.h>

#include "arch/x86/layout.h"
#include "vm.h"
#include "vm_guest.h"

void *vm_guest__hva(struct vm *vm, uint64_t gpa, uint64_t len)
{
	uint64_t high = vm->ram_size - vm->lowmem_size;

	if (gpa + len < gpa)
		return NULL;
	if (gpa + len <= vm->lowmem_size)
		return vm->ram + gpa;
	if (gpa >= MMIO_HOLE_END && gpa - MMIO_HOLE_END + len <= high)
		return vm->ram + vm->lowmem_size + (gpa - MMIO_HOLE_END);
	return NULL;
}

unsigned int vm_guest__ram_regions(const struct vm *vm,
				   struct vm_ram_region *r)
{
	r[0] = (struct vm_ram_region) { 0, vm->ram, vm->lowmem_size };
	if (vm->ram_size == vm->lowmem_size)
		return 1;
	r[1] = (struct vm_ram_region) { MMIO_HOLE_END,
					vm->ram + vm->lowmem_size,
					vm->ram_size - vm->lowmem_size };
	return 2;
}

int vm_guest__set_irq(struct vm *vm, unsigned int irq, int level)
{
	struct kvm_irq_level line = { .irq = irq, .level = level };

	return ioctl(vm->vm_fd, KVM_IRQ_LINE, &line) ? -errno : 0;
}
