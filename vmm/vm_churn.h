/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --churn's side thread (vm_churn.c), for vm.c: it runs from vm__start()
 * until the VM stops.
 */
#ifndef GPIN_VM_CHURN_H
#define GPIN_VM_CHURN_H

#include "vm.h"

/*
 * Starts the thread when --churn asked for one (vm->churn_kib); 0, or
 * -errno with the reason printed.
 */
int vm_churn__start(struct vm *vm);
/* Once the VM stopped: joins the thread, if running, and prints its count. */
void vm_churn__join(struct vm *vm);

#endif /* GPIN_VM_CHURN_H */
