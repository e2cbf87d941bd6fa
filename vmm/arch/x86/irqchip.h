/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef GPIN_X86_IRQCHIP_H
#define GPIN_X86_IRQCHIP_H

#include <stddef.h>

/*
 * On the VM @vm_fd: KVM's real-mode TSS and identity map (layout.h), the
 * in-kernel PICs, IOAPIC and PIT, and a PC's GSI routes.  0 or -errno
 * with the reason in @err.
 */
int irqchip__setup(int vm_fd, char *err, size_t errlen);

#endif /* GPIN_X86_IRQCHIP_H */
