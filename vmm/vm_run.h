/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Whether a VM runs: its stop (the first reason wins, and with it the
 * VMM's exit status) and its pause (every vCPU parked between two
 * KVM_RUN calls).  The vCPU threads, the churn thread, the signal loop
 * and the API all ask here; only the VM (vm.c) knows its vCPUs, and hands
 * in the one thing this needs of them: a kick that brings every vCPU out
 * of KVM_RUN.
 */
#ifndef GPIN_VM_RUN_H
#define GPIN_VM_RUN_H

#include <pthread.h>
#include <stdbool.h>

struct kvm_run;

/* Why the VM stopped; the VMM's exit status follows from it. */
enum vm_stop_reason {
	VM_STOP_NONE = 0,
	VM_STOP_POWEROFF,	/* ACPI S5: status 0 */
	VM_STOP_RESET,		/* i8042 reset, triple fault: status 0 */
	VM_STOP_EXIT_DEVICE,	/* guest wrote a code to PORT_EXIT (a test) */
	VM_STOP_PANIC,		/* pvpanic */
	VM_STOP_ERROR,		/* KVM or VMM failure */
	VM_STOP_SIGNAL,		/* SIGINT/SIGTERM to the VMM */
};

struct vm_run {
	/* Guards stopping and pausing; cond signals either's progress. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum vm_stop_reason reason;
	int exit_code;
	bool paused;		/* read without the lock on the vCPU fast path */
	unsigned int nparked;	/* vCPUs waiting out a pause */
	int stop_efd;		/* readable once a stop was requested */
	/* brings every vCPU out of KVM_RUN */
	void (*kick_all)(void *opaque);
	void *opaque;
};

/* Running, not paused, with its eventfd; 0 or -errno. */
int vm_run__init(struct vm_run *r, void (*kick_all)(void *opaque),
		 void *opaque);
void vm_run__exit(struct vm_run *r);

bool vm_run__stopping(const struct vm_run *r);
/*
 * Asks every vCPU to leave KVM_RUN and the VM to end.  The first reason
 * wins; later requests are ignored so one exit status is reported.
 */
void vm_run__request_stop(struct vm_run *r, enum vm_stop_reason reason,
			  int code);
/*
 * Pause: every one of @nvcpus vCPUs parks between two KVM_RUN calls;
 * returns once all have, so the guest runs nothing until
 * vm_run__resume().  0 or -EALREADY / -EINVAL (not paused) / -ESRCH
 * (stopping).
 */
int vm_run__pause(struct vm_run *r, unsigned int nvcpus);
int vm_run__resume(struct vm_run *r);

/* vCPU side, the fast path's test: whether a pause was asked for. */
static inline bool vm_run__pause_asked(const struct vm_run *r)
{
	return __atomic_load_n(&r->paused, __ATOMIC_ACQUIRE);
}

/* vCPU side: park while paused; re-arm KVM_RUN after a kick. */
void vm_run__park_if_paused(struct vm_run *r, struct kvm_run *run);

/* The VMM's exit status for how the VM stopped. */
int vm_run__exit_status(const struct vm_run *r);

#endif /* GPIN_VM_RUN_H */
