// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "boot.h"
#include "cpu.h"
#include "layout.h"

#define CPUID_MAX_ENTRIES	256

#define X86_CR0_PE		(1ULL << 0)
#define X86_CR0_ET		(1ULL << 4)
#define X86_CR0_PG		(1ULL << 31)
#define X86_CR4_PAE		(1ULL << 5)
#define EFER_LME		(1ULL << 8)
#define EFER_LMA		(1ULL << 10)
#define RFLAGS_RESERVED		(1ULL << 1)

#define CPUID_1_ECX_HYPERVISOR	(1U << 31)

struct kvm_cpuid2 *cpu__supported_cpuid(int kvm_fd)
{
	unsigned int nent = CPUID_MAX_ENTRIES;
	struct kvm_cpuid2 *cpuid;

	for (;;) {
		cpuid = calloc(1, sizeof(*cpuid) +
				  nent * sizeof(struct kvm_cpuid_entry2));
		if (!cpuid)
			return NULL;
		cpuid->nent = nent;
		if (!ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, cpuid))
			return cpuid;
		free(cpuid);
		if (errno != E2BIG || nent >= 4096)
			return NULL;
		nent *= 2;
	}
}

/*
 * Linux numbers CPUs by the APIC ids it finds in CPUID (leaf 1 for xAPIC,
 * leaves 0xb/0x1f for x2APIC); they must match the MADT or the kernel
 * refuses the CPU.
 */
void cpu__patch_cpuid(struct kvm_cpuid2 *cpuid, unsigned int apic_id,
		      unsigned int ncpus)
{
	unsigned int i;

	for (i = 0; i < cpuid->nent; i++) {
		struct kvm_cpuid_entry2 *e = &cpuid->entries[i];

		switch (e->function) {
		case 1:
			e->ebx = (e->ebx & 0x00ffffff) | (apic_id << 24);
			e->ecx |= CPUID_1_ECX_HYPERVISOR;
			break;
		case 0xb:
		case 0x1f:
			e->edx = apic_id;
			break;
		}
	}
}

int cpu__set_cpuid(int vcpu_fd, const struct kvm_cpuid2 *base,
		   unsigned int apic_id, unsigned int ncpus)
{
	size_t size = sizeof(*base) + base->nent * sizeof(base->entries[0]);
	struct kvm_cpuid2 *cpuid = malloc(size);
	int ret;

	if (!cpuid)
		return -ENOMEM;
	memcpy(cpuid, base, size);
	cpu__patch_cpuid(cpuid, apic_id, ncpus);
	ret = ioctl(vcpu_fd, KVM_SET_CPUID2, cpuid) ? -errno : 0;
	free(cpuid);
	return ret;
}

static struct kvm_segment flat_segment(uint16_t selector, uint8_t type,
				       int code)
{
	return (struct kvm_segment) {
		.base = 0,
		.limit = 0xffffffff,
		.selector = selector,
		.type = type,
		.present = 1,
		.dpl = 0,
		.db = code ? 0 : 1,	/* long-mode code must have D=0 */
		.s = 1,
		.l = code ? 1 : 0,
		.g = 1,
	};
}

static void setup_long_mode_sregs(struct kvm_sregs *sregs)
{
	struct kvm_segment data = flat_segment(BOOT_DS, 0x3, 0);

	sregs->cs = flat_segment(BOOT_CS, 0xb, 1);
	sregs->ds = data;
	sregs->es = data;
	sregs->fs = data;
	sregs->gs = data;
	sregs->ss = data;
	/* VM entry checks TR even though the guest never uses ours. */
	sregs->tr = (struct kvm_segment) {
		.selector = BOOT_TSS, .limit = 0x67, .type = 0xb, .present = 1,
	};
	sregs->gdt.base = BOOT_GDT_START;
	sregs->gdt.limit = BOOT_GDT_ENTRIES * 8 - 1;
	sregs->idt.base = BOOT_IDT_START;
	sregs->idt.limit = 0;

	sregs->cr3 = BOOT_PML4_START;
	sregs->cr4 = X86_CR4_PAE;
	sregs->cr0 = X86_CR0_PE | X86_CR0_ET | X86_CR0_PG;
	sregs->efer = EFER_LME | EFER_LMA;
}

int cpu__setup_boot_regs(int vcpu_fd, uint64_t entry, uint64_t zero_page)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs = {
		.rip = entry,
		.rsi = zero_page,
		.rsp = BOOT_STACK_TOP,
		.rflags = RFLAGS_RESERVED,
	};
	struct kvm_fpu fpu = {
		.fcw = 0x37f,		/* x87 state after FNINIT */
		.mxcsr = 0x1f80,	/* all SSE exceptions masked */
	};

	if (ioctl(vcpu_fd, KVM_GET_SREGS, &sregs))
		return -errno;
	setup_long_mode_sregs(&sregs);
	if (ioctl(vcpu_fd, KVM_SET_SREGS, &sregs))
		return -errno;
	if (ioctl(vcpu_fd, KVM_SET_REGS, &regs))
		return -errno;
	if (ioctl(vcpu_fd, KVM_SET_FPU, &fpu))
		return -errno;
	return 0;
}
