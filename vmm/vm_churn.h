/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --churn's side thread (vm_churn.c), a benchmark aid: a VMM thread that
 * maps, touches and unmaps memory until the VM stops, an mmap_lock writer
 * as memory hot-plug or an allocator would be.  It owns its state; the VM
 * holds only a pointer, NULL without --churn.
 */
#ifndef GPIN_VM_CHURN_H
#define GPIN_VM_CHURN_H

struct vm;
struct vm_churn;

/*
 * A churn of @kib KiB per cycle, @hz cycles a second (0: flat out), for
 * @vm (it runs until vm_run__stopping()); NULL without memory.
 */
struct vm_churn *vm_churn__create(struct vm *vm, unsigned int kib,
				  unsigned int hz);
/* Starts the thread (vm__start(), before the vCPUs); 0 or -errno. */
int vm_churn__start(struct vm_churn *churn);
/* Once the VM stopped: joins the thread, if running, and prints its count. */
void vm_churn__join(struct vm_churn *churn);
void vm_churn__destroy(struct vm_churn *churn);

#endif /* GPIN_VM_CHURN_H */
