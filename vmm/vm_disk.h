/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The VM's disks (vm_disk.c), for vm.c: built while vm__create() builds
 * the machine, torn down with it.
 */
#ifndef GPIN_VM_DISK_H
#define GPIN_VM_DISK_H

#include "vm_config.h"
#include "vm.h"

/*
 * Creates disk 0, 1, ... of @cfg, each on its transport; 0, or -errno
 * with the reason in @err.  The disks made so far stay in @vm for
 * vm_disk__destroy_all().
 */
int vm_disk__setup_all(struct vm *vm, const struct vm_config *cfg, char *err,
		       size_t errlen);
/* Destroys every disk and the PCI host bridge; fine on a partial VM. */
void vm_disk__destroy_all(struct vm *vm);

#endif /* GPIN_VM_DISK_H */
