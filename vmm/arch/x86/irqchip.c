// SPDX-License-Identifier: GPL-2.0-only
/*
 * The PC's interrupt controllers, in KVM: the two 8259 PICs and the
 * IOAPIC (KVM_CREATE_IRQCHIP), the PIT, and the GSI routes between them
 * that the MADT describes (acpi_madt.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/kvm.h>

#include "arch/x86/irqchip.h"
#include "arch/x86/layout.h"
#include "log.h"

static void add_route(struct kvm_irq_routing *r, uint32_t gsi, uint32_t chip,
		      uint32_t pin)
{
	r->entries[r->nr++] = (struct kvm_irq_routing_entry) {
		.gsi = gsi,
		.type = KVM_IRQ_ROUTING_IRQCHIP,
		.u.irqchip = { .irqchip = chip, .pin = pin },
	};
}

/*
 * The routing of a PC, which the MADT describes: ISA IRQs go to both
 * PICs and the IOAPIC, except that the PIT's IRQ 0 is wired to IOAPIC pin
 * 2 (the "IRQ0 -> GSI2" override).  KVM's default routes GSI 0 to pin 0,
 * where Linux never looks: its timer interrupts would be lost.
 */
static int set_gsi_routing(int vm_fd, char *err, size_t errlen)
{
	struct kvm_irq_routing *r;
	uint32_t i;
	int ret;

	r = calloc(1, sizeof(*r) + (ISA_IRQS + IOAPIC_PINS) *
			       sizeof(struct kvm_irq_routing_entry));
	if (!r)
		return -ENOMEM;
	for (i = 0; i < ISA_IRQS; i++) {
		/* IRQ 2 is the cascade from the slave PIC. */
		if (i == 2)
			continue;
		add_route(r, i, i < PIC_PINS ? KVM_IRQCHIP_PIC_MASTER :
					       KVM_IRQCHIP_PIC_SLAVE,
			  i % PIC_PINS);
	}
	add_route(r, 0, KVM_IRQCHIP_IOAPIC, PIT_IOAPIC_PIN);
	for (i = 1; i < IOAPIC_PINS; i++)
		if (i != PIT_IOAPIC_PIN)
			add_route(r, i, KVM_IRQCHIP_IOAPIC, i);
	ret = ioctl(vm_fd, KVM_SET_GSI_ROUTING, r) ? -errno : 0;
	if (ret)
		err__set(err, errlen, "KVM_SET_GSI_ROUTING: %s",
			 strerror(-ret));
	free(r);
	return ret;
}

int irqchip__setup(int vm_fd, char *err, size_t errlen)
{
	struct kvm_pit_config pit = { .flags = 0 };

	if (ioctl(vm_fd, KVM_SET_TSS_ADDR, KVM_TSS_ADDR) < 0 ||
	    ioctl(vm_fd, KVM_SET_IDENTITY_MAP_ADDR,
		  &(uint64_t){ KVM_IDENTITY_MAP_ADDR }) < 0) {
		err__set(err, errlen, "setting the TSS/identity map: %s",
			 strerror(errno));
		return -errno;
	}
	if (ioctl(vm_fd, KVM_CREATE_IRQCHIP, 0) < 0) {
		err__set(err, errlen, "KVM_CREATE_IRQCHIP: %s",
			 strerror(errno));
		return -errno;
	}
	if (ioctl(vm_fd, KVM_CREATE_PIT2, &pit) < 0) {
		err__set(err, errlen, "KVM_CREATE_PIT2: %s", strerror(errno));
		return -errno;
	}
	return set_gsi_routing(vm_fd, err, errlen);
}
