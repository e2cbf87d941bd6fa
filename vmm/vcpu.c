// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "console.h"
#include "log.h"
#include "thread.h"
#include "vcpu.h"
#include "vm.h"

struct vcpu *vcpu__create(struct vm *vm, unsigned int id)
{
	struct vcpu *vcpu = calloc(1, sizeof(*vcpu));

	if (!vcpu)
		return NULL;
	vcpu->vm = vm;
	vcpu->id = id;
	vcpu->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, id);
	if (vcpu->fd < 0)
		goto err_free;
	vcpu->run = mmap(NULL, vm->vcpu_mmap_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED, vcpu->fd, 0);
	if (vcpu->run == MAP_FAILED)
		goto err_close;
	return vcpu;

err_close:
	close(vcpu->fd);
err_free:
	free(vcpu);
	return NULL;
}

void vcpu__destroy(struct vcpu *vcpu)
{
	if (!vcpu)
		return;
	munmap(vcpu->run, vcpu->vm->vcpu_mmap_size);
	close(vcpu->fd);
	free(vcpu);
}

static void handle_io(struct vm *vm, struct kvm_run *run)
{
	uint8_t *p = (uint8_t *)run + run->io.data_offset;
	bool out = run->io.direction == KVM_EXIT_IO_OUT;
	uint32_t i;

	/* String I/O (rep outsb/insb) arrives as count back-to-back items. */
	for (i = 0; i < run->io.count; i++, p += run->io.size)
		bus__access(&vm->pio, run->io.port, p, run->io.size, out);
}

static void handle_mmio(struct vm *vm, struct kvm_run *run)
{
	unsigned int len = run->mmio.len;

	if (len > sizeof(run->mmio.data))
		return;
	bus__access(&vm->mmio, run->mmio.phys_addr, run->mmio.data, len,
		    run->mmio.is_write);
}

static int handle_system_event(struct vm *vm, struct kvm_run *run)
{
	switch (run->system_event.type) {
	case KVM_SYSTEM_EVENT_SHUTDOWN:
		vm_run__request_stop(&vm->run, VM_STOP_POWEROFF, 0);
		break;
	case KVM_SYSTEM_EVENT_RESET:
		vm_run__request_stop(&vm->run, VM_STOP_RESET, 0);
		break;
	case KVM_SYSTEM_EVENT_CRASH:
		vm_run__request_stop(&vm->run, VM_STOP_PANIC, 0);
		break;
	default:
		pr_err("unknown system event %u", run->system_event.type);
		vm_run__request_stop(&vm->run, VM_STOP_ERROR, 0);
		break;
	}
	return -1;
}

int vcpu__handle_exit(struct vm *vm, struct kvm_run *run)
{
	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		handle_io(vm, run);
		return 0;
	case KVM_EXIT_MMIO:
		handle_mmio(vm, run);
		return 0;
	case KVM_EXIT_INTR:
	case KVM_EXIT_HLT:	/* the in-kernel LAPIC handles HLT; harmless */
		return 0;
	case KVM_EXIT_SHUTDOWN:
		/* A triple fault: on a PC that resets the machine. */
		pr_warn("guest triple fault: reset");
		vm_run__request_stop(&vm->run, VM_STOP_RESET, 0);
		return -1;
	case KVM_EXIT_SYSTEM_EVENT:
		return handle_system_event(vm, run);
	case KVM_EXIT_FAIL_ENTRY:
		pr_err("VM entry failed, reason 0x%llx", (unsigned long long)
		       run->fail_entry.hardware_entry_failure_reason);
		break;
	case KVM_EXIT_INTERNAL_ERROR:
		pr_err("KVM internal error, suberror %u",
		       run->internal.suberror);
		break;
	default:
		pr_err("unhandled exit reason %u", run->exit_reason);
		break;
	}
	vm_run__request_stop(&vm->run, VM_STOP_ERROR, 0);
	return -1;
}

void vcpu__print_state(struct vcpu *vcpu, FILE *out)
{
	bool in_run = __atomic_load_n(&vcpu->in_run, __ATOMIC_RELAXED);

	fprintf(out, "gpin-vmm: vcpu%u: %llu exits, %s (last exit %u)\n",
		vcpu->id,
		(unsigned long long)__atomic_load_n(&vcpu->exits,
						    __ATOMIC_RELAXED),
		in_run ? "in the guest" : "in the VMM",
		__atomic_load_n(&vcpu->last_exit, __ATOMIC_RELAXED));
}

void vcpu__request_regs(struct vcpu *vcpu)
{
	__atomic_store_n(&vcpu->want_regs, true, __ATOMIC_RELEASE);
	vcpu__kick(vcpu);
}

/*
 * Called by the vCPU thread itself: KVM_GET_* waits for KVM_RUN to return,
 * so only the thread that left it can read its state without blocking.
 */
static void print_regs(struct vcpu *vcpu)
{
	struct kvm_vcpu_events ev = { 0 };
	struct kvm_mp_state mp = { 0 };
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	char buf[256];
	int n;

	if (ioctl(vcpu->fd, KVM_GET_REGS, &regs) ||
	    ioctl(vcpu->fd, KVM_GET_SREGS, &sregs))
		return;
	ioctl(vcpu->fd, KVM_GET_VCPU_EVENTS, &ev);
	ioctl(vcpu->fd, KVM_GET_MP_STATE, &mp);
	n = snprintf(buf, sizeof(buf),
		     "gpin-vmm: vcpu%u: rip %#llx rsp %#llx rflags %#llx cr2 %#llx cr3 %#llx mp_state %u exception %s %u irq %s%s nmi %s\n",
		     vcpu->id, (unsigned long long)regs.rip,
		     (unsigned long long)regs.rsp,
		     (unsigned long long)regs.rflags,
		     (unsigned long long)sregs.cr2,
		     (unsigned long long)sregs.cr3, mp.mp_state,
		     ev.exception.injected ? "injected" :
		     ev.exception.pending ? "pending" : "none",
		     ev.exception.injected || ev.exception.pending ?
		     ev.exception.nr : 0,
		     ev.interrupt.injected ? "injected" : "none",
		     ev.interrupt.shadow ? " (shadow)" : "",
		     ev.nmi.pending ? "pending" :
		     ev.nmi.injected ? "injected" : "none");
	/* Every vCPU prints at once: console__write_lines() keeps lines whole. */
	if (n > 0)
		console__write_lines(stderr, buf, (size_t)n < sizeof(buf) ?
				     (size_t)n : sizeof(buf) - 1);
}

static int run_once(struct vcpu *vcpu)
{
	int ret;

	__atomic_store_n(&vcpu->in_run, true, __ATOMIC_RELAXED);
	ret = ioctl(vcpu->fd, KVM_RUN, 0);
	__atomic_store_n(&vcpu->in_run, false, __ATOMIC_RELAXED);
	if (ret == 0) {
		__atomic_store_n(&vcpu->last_exit, vcpu->run->exit_reason,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&vcpu->exits, vcpu->exits + 1,
				 __ATOMIC_RELAXED);
	}
	return ret;
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *vcpu = arg;
	struct vm *vm = vcpu->vm;
	sigset_t set;

	/* Only the kick signal reaches vCPU threads. */
	sigemptyset(&set);
	sigaddset(&set, VCPU_KICK_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);

	for (;;) {
		if (vm_run__pause_asked(&vm->run))
			vm_run__park_if_paused(&vm->run, vcpu->run);
		if (run_once(vcpu) < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				if (vm_run__stopping(&vm->run))
					break;
				if (__atomic_exchange_n(&vcpu->want_regs, false,
							__ATOMIC_ACQ_REL))
					print_regs(vcpu);
				/* A pause kick, or a pause already over. */
				vm_run__park_if_paused(&vm->run, vcpu->run);
				continue;
			}
			pr_err("vcpu%u: KVM_RUN: %s",
			       vcpu->id, strerror(errno));
			vm_run__request_stop(&vm->run, VM_STOP_ERROR, 0);
			break;
		}
		if (vcpu__handle_exit(vm, vcpu->run) < 0) {
			/* Where it died: the one clue a triple fault leaves. */
			if (vcpu->run->exit_reason == KVM_EXIT_SHUTDOWN)
				print_regs(vcpu);
			break;
		}
		if (vm_run__stopping(&vm->run))
			break;
	}
	return NULL;
}

int vcpu__start(struct vcpu *vcpu)
{
	int ret = -thread__start(&vcpu->thread, vcpu_thread, vcpu,
				THREAD_STACK_VCPU);
	char name[16];

	if (ret)
		return -ret;
	vcpu->running = true;
	/*
	 * Named here, not by the thread itself: whoever asks as soon as the
	 * VM has started (libvirt lists threads named vcpuN when vm.boot
	 * returns) must already see the name.
	 */
	snprintf(name, sizeof(name), "vcpu%u", vcpu->id);
	pthread_setname_np(vcpu->thread, name);
	return 0;
}

void vcpu__kick(struct vcpu *vcpu)
{
	/*
	 * immediate_exit covers a thread that is between KVM_RUN calls when
	 * the signal lands: its next KVM_RUN returns EINTR at once.
	 */
	__atomic_store_n(&vcpu->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	if (vcpu->running)
		pthread_kill(vcpu->thread, VCPU_KICK_SIGNAL);
}

void vcpu__join(struct vcpu *vcpu)
{
	if (vcpu->running) {
		pthread_join(vcpu->thread, NULL);
		vcpu->running = false;
	}
}
