/* SPDX-License-Identifier: GPL-2.0-only */
/* A vCPU: one KVM vCPU fd, its shared kvm_run page and its thread. */
#ifndef GPIN_VCPU_H
#define GPIN_VCPU_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/kvm.h>

struct vm;

struct vcpu {
	struct vm *vm;
	unsigned int id;	/* also its APIC id */
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	bool running;

	/*
	 * Where the thread is, for SIGUSR1 (vcpu__print_state): written by
	 * the vCPU thread alone, read racily by the main thread.
	 */
	uint64_t exits;
	uint32_t last_exit;	/* KVM_EXIT_* of the latest exit */
	bool in_run;		/* inside KVM_RUN */
	bool want_regs;		/* main thread asks for a register dump */
};

/*
 * Signal that pulls a vCPU thread out of KVM_RUN; its handler does nothing.
 * Not SIGUSR1: vCPU threads leave the kick signal unblocked, so a kill(1)
 * of it would land on a vCPU as a kick, and SIGUSR1 is the user's (main.c:
 * print the disks' counters).  SIGRTMIN is Cloud Hypervisor's choice too.
 */
#define VCPU_KICK_SIGNAL	SIGRTMIN

struct vcpu *vcpu__create(struct vm *vm, unsigned int id);
void vcpu__destroy(struct vcpu *vcpu);
int vcpu__start(struct vcpu *vcpu);
/* Makes the vCPU leave KVM_RUN now, or not enter it again. */
void vcpu__kick(struct vcpu *vcpu);
void vcpu__join(struct vcpu *vcpu);
/*
 * Whether the vCPU is in the guest or in the VMM and how many exits it
 * took; then its registers, which its own thread prints once kicked by
 * vcpu__request_regs().  What a user needs to tell a stuck guest from a
 * stuck VMM.
 */
void vcpu__print_state(struct vcpu *vcpu, FILE *out);
void vcpu__request_regs(struct vcpu *vcpu);

/*
 * Serves one exit described by @run.  Returns 0 to re-enter the guest, or
 * a negative value when the VM must stop (the reason is recorded in @vm).
 */
int vcpu__handle_exit(struct vm *vm, struct kvm_run *run);

#endif /* GPIN_VCPU_H */
