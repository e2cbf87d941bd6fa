// SPDX-License-Identifier: GPL-2.0-only
/*
 * The VM's disks (--disk): each a virtio-blk device on its transport,
 * virtio-mmio or virtio-pci, with the PCI host bridge the first PCI disk
 * brings.  vm.c builds them after the legacy devices and tears them down
 * with the machine.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kvm.h>

#include "libgpin.h"

#include "arch/x86/layout.h"
#include "devices/virtio_blk.h"
#include "log.h"
#include "pci/host.h"
#include "virtio/mmio.h"
#include "virtio/pci.h"
#include "vm.h"
#include "vm_disk.h"
#include "vm_guest.h"

static void *vm_translate(void *opaque, uint64_t gpa, uint64_t len)
{
	return vm_guest__hva(opaque, gpa, len);
}

static void virtio_set_irq(void *opaque, unsigned int gsi, int level)
{
	vm_guest__set_irq(opaque, gsi, level);
}

/*
 * service=iothread: the notify write of queue q (value q) to its register
 * (@len bytes at @addr) signals that queue's eventfd inside KVM, and the
 * vCPU goes straight back to the guest without an exit to the VMM.
 * Without an eventfd (service=vcpu) the write exits to the VMM as MMIO.
 */
static int vm_attach_ioeventfd(struct vm *vm, struct virtio_blk *blk,
			       unsigned int q, uint64_t addr, uint32_t len)
{
	struct kvm_ioeventfd ev = {
		.datamatch = q,
		.addr = addr,
		.len = len,
		.fd = virtio_blk__kick_fd(blk, q),
		.flags = KVM_IOEVENTFD_FLAG_DATAMATCH,
	};

	if (ev.fd < 0)
		return 0;
	return ioctl(vm->vm_fd, KVM_IOEVENTFD, &ev) ? -errno : 0;
}

/*
 * virtio-mmio device i sits at VIRTIO_MMIO_START + i * VIRTIO_MMIO_SIZE
 * with GSI VIRTIO_GSI_BASE + i (arch/x86/layout.h), which the DSDT tells
 * the guest; every queue's notify is the one QueueNotify register.
 */
static int vm_setup_disk_mmio(struct vm *vm, unsigned int i,
			      const struct virtq_mem *mem, unsigned int nq)
{
	uint64_t base = VIRTIO_MMIO_START + i * VIRTIO_MMIO_SIZE;
	unsigned int q;
	int ret;

	vm->disk_mmio[i] = virtio_mmio__create(virtio_blk__dev(vm->disks[i]),
					       mem, base, VIRTIO_GSI_BASE + i,
					       virtio_set_irq, vm);
	if (!vm->disk_mmio[i])
		return -ENOMEM;
	ret = virtio_mmio__attach(vm->disk_mmio[i], &vm->mmio);
	for (q = 0; q < nq && !ret; q++)
		ret = vm_attach_ioeventfd(vm, vm->disks[i], q,
					  base + VIRTIO_MMIO_QUEUE_NOTIFY, 4);
	return ret;
}

/*
 * An MSI-X message: KVM_SIGNAL_MSI injects it through the in-kernel
 * LAPICs directly, with no GSI route to set up (KVM_SET_GSI_ROUTING
 * would replace the PC routes vm.c's vm_setup_gsi_routing() made).
 */
static void vm_send_msi(void *opaque, uint64_t addr, uint32_t data)
{
	struct vm *vm = opaque;
	struct kvm_msi msi = {
		.address_lo = addr,
		.address_hi = addr >> 32,
		.data = data,
	};

	/*
	 * Only a message the guest programmed oddly fails (KVM checks the
	 * destination bits); say so once, not per interrupt.
	 */
	if (ioctl(vm->vm_fd, KVM_SIGNAL_MSI, &msi) < 0 &&
	    !__atomic_exchange_n(&vm->msi_failed, true, __ATOMIC_RELAXED))
		pr_warn("KVM_SIGNAL_MSI to 0x%llx: %s "
			"(reported once)", (unsigned long long)addr,
			strerror(errno));
}

/*
 * The host bridge and its configuration ports, on every VM: a PC without
 * one makes Linux print "PCI: Fatal: No config space access function
 * found", which reads like a broken machine even when every disk is on
 * virtio-mmio.  With no PCI disk, bus 0 holds only the bridge.
 */
static int vm_setup_pci_host(struct vm *vm)
{
	vm->pci = pci_host__create();
	if (!vm->pci)
		return -ENOMEM;
	return pci_host__attach(vm->pci, &vm->pio);
}

_Static_assert(VM_DISKS_MAX * PCI_MMIO_SLOT_SIZE <= PCI_MMIO_SIZE,
	       "a PCI BAR slot for every disk");
_Static_assert(VIRTIO_PCI_BAR_SIZE <= PCI_MMIO_SLOT_SIZE &&
	       PCI_MMIO_SLOT_SIZE % VIRTIO_PCI_BAR_SIZE == 0,
	       "a virtio-pci BAR fits its slot, aligned");

/*
 * virtio-pci: the BAR in the next slot of the PCI window; queue q's
 * notify register is its own, written with 16 bits.
 */
static int vm_setup_disk_pci(struct vm *vm, unsigned int i,
			     const struct virtq_mem *mem, unsigned int nq)
{
	uint64_t bar = PCI_MMIO_START + vm->npci * PCI_MMIO_SLOT_SIZE;
	struct virtio_pci *p;
	unsigned int q;
	int ret;

	/* vm_setup_disk() names what is missing */
	if (ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SIGNAL_MSI) <= 0)
		return -EOPNOTSUPP;
	p = virtio_pci__create(virtio_blk__dev(vm->disks[i]), mem, bar,
			       vm_send_msi, vm);
	if (!p)
		return -ENOMEM;
	vm->disk_pci[i] = p;
	vm->npci++;
	ret = pci_host__add(vm->pci, virtio_pci__func(p));
	if (ret >= 0)
		ret = virtio_pci__attach(p, &vm->mmio);
	for (q = 0; q < nq && !ret; q++)
		ret = vm_attach_ioeventfd(vm, vm->disks[i], q,
					  virtio_pci__notify_addr(p, q), 2);
	return ret;
}

/*
 * The backend of a disk's pin= (settled by vm_config__resolve()): the
 * kernel's io_uring, or gpin.ko's DIO in the matching mode; registered
 * is gpin.ko's DIO on the RAM the VM pinned at start (vm_pinned_ram.h),
 * what it must still pin (bounce buffers) in the fast mode.
 */
static void disk_backend(const struct vm *vm, const struct disk_config *d,
			 struct virtio_blk_params *p)
{
	switch (d->pin) {
	case DISK_PIN_FAST:
		p->backend = &blk_backend_gpin_ops;
		p->gpin_mode = GPIN_MODE_FAST;
		break;
	case DISK_PIN_LOCKED:
		p->backend = &blk_backend_gpin_ops;
		p->gpin_mode = GPIN_MODE_LOCKED;
		break;
	case DISK_PIN_REGISTERED:
		p->backend = &blk_backend_gpin_ops;
		p->gpin_mode = GPIN_MODE_FAST;
		p->pinned_ram = vm->pinned_ram;
		break;
	case DISK_PIN_KERNEL:
	case DISK_PIN_DEFAULT:
		p->backend = &blk_backend_uring_ops;
		break;
	}
}

static int vm_setup_disk(struct vm *vm, const struct disk_config *d,
			 unsigned int i, char *err, size_t errlen)
{
	struct virtq_mem mem = { .translate = vm_translate, .opaque = vm };
	struct virtio_blk_params p = {
		.path = d->path,
		.ro = d->ro,
		.nqueues = d->queues ? d->queues : vm->ncpus,
		.iothread = d->io == DISK_IO_IOTHREAD,
		.no_event_idx = d->no_event_idx,
		.iops = d->iops,
		.bps = d->bps,
		.poll_us = d->poll_us,
		.irq_hold_us = d->irq_hold_us == DISK_IRQ_HOLD_AUTO ?
			       VIRTIO_BLK_IRQ_HOLD_AUTO : d->irq_hold_us,
		.index = i,
	};
	char why[256];
	int ret;

	disk_backend(vm, d, &p);
	vm->disks[i] = virtio_blk__create(&p, why, sizeof(why));
	if (!vm->disks[i]) {
		err__set(err, errlen, "--disk %s", why);
		return -EINVAL;
	}
	vm->ndisks = i + 1;
	if (d->transport == DISK_TRANSPORT_PCI)
		ret = vm_setup_disk_pci(vm, i, &mem, p.nqueues);
	else
		ret = vm_setup_disk_mmio(vm, i, &mem, p.nqueues);
	/*
	 * PCI is only the default: a KVM without MSI injection (some
	 * software ones) still runs the disk, on virtio-mmio.  The check
	 * comes before anything of the PCI device exists.
	 */
	if (ret == -EOPNOTSUPP && d->transport_from == CONFIG_FROM_DEFAULT) {
		pr_info("blk%u: transport=mmio (KVM lacks KVM_CAP_SIGNAL_MSI, "
			"which the default transport=pci needs)", i);
		ret = vm_setup_disk_mmio(vm, i, &mem, p.nqueues);
	}
	if (ret == -EOPNOTSUPP)
		err__set(err, errlen, "--disk %s: KVM lacks "
			 "KVM_CAP_SIGNAL_MSI, which transport=pci needs",
			 d->path);
	else if (ret)
		err__set(err, errlen, "--disk %s: %s", d->path, strerror(-ret));
	return ret;
}

/*
 * Disk i on virtio-mmio has window and GSI i, and the DSDT lists those
 * disks in this order; disks on PCI take the PCI slots in this order.
 */
int vm_disk__setup_all(struct vm *vm, const struct vm_config *cfg, char *err,
		       size_t errlen)
{
	unsigned int i;
	int ret;

	ret = vm_setup_pci_host(vm);
	if (ret)
		err__set(err, errlen, "PCI host bridge: %s", strerror(-ret));
	for (i = 0; i < cfg->ndisks && !ret; i++)
		ret = vm_setup_disk(vm, &cfg->disks[i], i, err, errlen);
	return ret;
}

void vm_disk__destroy_all(struct vm *vm)
{
	unsigned int i;

	/* The transport resets its device first: no I/O is left in flight. */
	for (i = 0; i < vm->ndisks; i++) {
		virtio_mmio__destroy(vm->disk_mmio[i]);
		virtio_pci__destroy(vm->disk_pci[i]);
		virtio_blk__destroy(vm->disks[i]);
		vm->disk_mmio[i] = NULL;
		vm->disk_pci[i] = NULL;
		vm->disks[i] = NULL;
	}
	vm->ndisks = 0;
	vm->npci = 0;
	pci_host__destroy(vm->pci);
	vm->pci = NULL;
}
