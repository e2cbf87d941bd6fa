/* SPDX-License-Identifier: GPL-2.0-only */
/* x86 vCPU state at reset: CPUID, and the 64-bit boot entry for the BSP. */
#ifndef GPIN_X86_CPU_H
#define GPIN_X86_CPU_H

#include <stdint.h>

#include <linux/kvm.h>

/*
 * KVM's supported CPUID, fetched once per VM; each vCPU gets a copy with
 * its own APIC id.  Caller frees with free().
 */
struct kvm_cpuid2 *cpu__supported_cpuid(int kvm_fd);

/* Patches a copy of @base for vCPU @apic_id of @ncpus (pure; tested). */
void cpu__patch_cpuid(struct kvm_cpuid2 *cpuid, unsigned int apic_id,
		      unsigned int ncpus);

int cpu__set_cpuid(int vcpu_fd, const struct kvm_cpuid2 *base,
		   unsigned int apic_id, unsigned int ncpus);

/* Long mode, paging on, CS/DS from the boot GDT, RIP at @entry, RSI at @zero_page. */
int cpu__setup_boot_regs(int vcpu_fd, uint64_t entry, uint64_t zero_page);

#endif /* GPIN_X86_CPU_H */
