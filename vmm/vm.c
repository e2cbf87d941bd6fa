// SPDX-License-Identifier: GPL-2.0-only
/*
 * One VM's life cycle: open KVM, build the machine (RAM, irqchip, legacy
 * devices, the disks of vm_disk.c, vCPUs), load the guest, then start,
 * pause, stop and tear it down.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/kvm.h>

#include "arch/x86/acpi.h"
#include "arch/x86/boot.h"
#include "arch/x86/cpu.h"
#include "arch/x86/irqchip.h"
#include "arch/x86/layout.h"
#include "console.h"
#include "devices/acpi_pm.h"
#include "devices/pvpanic.h"
#include "devices/virtio_blk.h"
#include "log.h"
#include "vcpu.h"
#include "virtio/mmio.h"
#include "vm.h"
#include "vm_churn.h"
#include "vm_disk.h"
#include "vm_guest.h"
#include "vm_pinned_ram.h"

#define KVM_DEV			"/dev/kvm"
#define KVM_API_VERSION_NEEDED	12

static const struct {
	int cap;
	const char *name;
} required_caps[] = {
	{ KVM_CAP_USER_MEMORY,		"USER_MEMORY" },
	{ KVM_CAP_IRQCHIP,		"IRQCHIP" },
	{ KVM_CAP_PIT2,			"PIT2" },
	{ KVM_CAP_IMMEDIATE_EXIT,	"IMMEDIATE_EXIT" },
	{ KVM_CAP_EXT_CPUID,		"EXT_CPUID" },
};

static int vm_open_kvm(struct vm *vm, char *err, size_t errlen)
{
	unsigned int i;
	int version;

	vm->kvm_fd = open(KVM_DEV, O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0) {
		int e = errno;

		err__set(err, errlen, "cannot open %s: %s%s", KVM_DEV,
			 strerror(e), e == ENOENT ? " (is KVM enabled and the "
			 "kvm-intel/kvm-amd module loaded?)" : "");
		return -e;
	}
	version = ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0);
	if (version != KVM_API_VERSION_NEEDED) {
		err__set(err, errlen, "KVM API version %d, need %d",
			 version, KVM_API_VERSION_NEEDED);
		return -EINVAL;
	}
	for (i = 0; i < sizeof(required_caps) / sizeof(required_caps[0]); i++) {
		if (ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION,
			  required_caps[i].cap) <= 0) {
			err__set(err, errlen, "KVM lacks KVM_CAP_%s",
				 required_caps[i].name);
			return -EINVAL;
		}
	}
	vm->vcpu_mmap_size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vm->vcpu_mmap_size <= 0) {
		err__set(err, errlen, "KVM_GET_VCPU_MMAP_SIZE failed");
		return -EINVAL;
	}
	return 0;
}

static int set_memory_region(struct vm *vm, uint32_t slot, uint64_t gpa,
			     uint64_t size, void *hva)
{
	struct kvm_userspace_memory_region region = {
		.slot = slot,
		.guest_phys_addr = gpa,
		.memory_size = size,
		.userspace_addr = (uint64_t)(uintptr_t)hva,
	};

	return ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &region) ? -errno : 0;
}

/*
 * Guest RAM is one anonymous private mapping: the pages gpin.ko pins are
 * plain anonymous pages of this process, as in any VMM.  RAM past the
 * MMIO hole is the same mapping's tail, mapped at 4 GiB.
 */
static int vm_setup_ram(struct vm *vm, uint64_t size, char *err, size_t errlen)
{
	struct vm_ram_region r[VM_RAM_REGIONS_MAX];
	unsigned int i, n;
	int ret;

	vm->ram_size = size;
	vm->lowmem_size = size < MMIO_HOLE_START ? size : MMIO_HOLE_START;
	vm->ram = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm->ram == MAP_FAILED) {
		vm->ram = NULL;
		ret = -errno;
		err__set(err, errlen, "cannot map %llu MiB of guest RAM: %s",
			 (unsigned long long)(size >> 20), strerror(-ret));
		return ret;
	}
	/*
	 * Not inherited by a child (QEMU does the same): a fork()ed helper
	 * never shares guest RAM copy-on-write, so no write of ours can move
	 * a page away from I/O in flight.  gpin.ko's FOLL_PIN pins already
	 * make fork copy pinned pages; this is the second line of defence,
	 * and it spares fork copying gigabytes.
	 */
	if (madvise(vm->ram, size, MADV_DONTFORK))
		pr_warn("MADV_DONTFORK on guest RAM: %s", strerror(errno));
	n = vm_guest__ram_regions(vm, r);
	ret = 0;
	for (i = 0; i < n && !ret; i++)
		ret = set_memory_region(vm, i, r[i].gpa, r[i].size, r[i].hva);
	if (ret)
		err__set(err, errlen, "KVM_SET_USER_MEMORY_REGION: %s",
			 strerror(-ret));
	return ret;
}

/*
 * pin=registered: guest RAM pinned once, for every disk and queue with
 * it, before their backends start.  No other pin mode stands in when it
 * cannot: the VM does not start.
 */
static int vm_pin_ram(struct vm *vm, char *err, size_t errlen)
{
	struct vm_ram_region r[VM_RAM_REGIONS_MAX];
	unsigned int n = vm_guest__ram_regions(vm, r);

	return vm_pinned_ram__create(&vm->pinned_ram, r, n, err, errlen);
}

static void serial_set_irq(void *opaque, int level)
{
	vm_guest__set_irq(opaque, IRQ_COM1, level);
}

/* The devices that end the VM, each with the VM's run state (vm_run.h). */
static void guest_reset(void *run)
{
	vm_run__request_stop(run, VM_STOP_RESET, 0);
}

static void guest_poweroff(void *run)
{
	vm_run__request_stop(run, VM_STOP_POWEROFF, 0);
}

static void guest_panicked(void *run)
{
	vm_run__request_stop(run, VM_STOP_PANIC, 0);
}

static void guest_exit(void *run, uint8_t code)
{
	vm_run__request_stop(run, VM_STOP_EXIT_DEVICE, code);
}

static int vm_setup_devices(struct vm *vm, const struct vm_config *cfg,
			    const struct serial_backend *console, char *err,
			    size_t errlen)
{
	struct serial_backend uart = *console;
	int ret;

	uart.set_irq = serial_set_irq;
	uart.irq_opaque = vm;
	vm->serial = serial__create(&uart);
	vm->acpi_pm = acpi_pm__create(guest_poweroff, &vm->run);
	vm->pvpanic = pvpanic__create(guest_panicked, &vm->run);
	if (!vm->serial || !vm->acpi_pm || !vm->pvpanic) {
		err__set(err, errlen, "no memory for the devices");
		return -ENOMEM;
	}
	vm->kbd = (struct i8042) { .reset = guest_reset, .opaque = &vm->run };
	vm->exit_port = (struct exit_port) { .exit = guest_exit,
					     .opaque = &vm->run };

	ret = serial__attach(vm->serial, &vm->pio, PORT_COM1);
	if (!ret)
		ret = i8042__attach(&vm->kbd, &vm->pio);
	/* A test hook, as QEMU's isa-debug-exit: only when asked for. */
	if (!ret && cfg->test_exit_port)
		ret = exit_port__attach(&vm->exit_port, &vm->pio);
	if (!ret)
		ret = rtc__attach(&vm->rtc, &vm->pio);
	if (!ret)
		ret = acpi_pm__attach(vm->acpi_pm, &vm->pio);
	if (!ret)
		ret = pvpanic__attach(vm->pvpanic, &vm->pio);
	if (ret)
		err__set(err, errlen, "attaching the legacy devices: %s",
			 strerror(-ret));
	return ret;
}

static int vm_create_vcpus(struct vm *vm, char *err, size_t errlen)
{
	struct kvm_cpuid2 *cpuid;
	unsigned int i;
	int ret = 0;

	vm->vcpus = calloc(vm->ncpus, sizeof(*vm->vcpus));
	cpuid = cpu__supported_cpuid(vm->kvm_fd);
	if (!vm->vcpus || !cpuid) {
		err__set(err, errlen, "cannot get the supported CPUID");
		free(cpuid);
		return -ENOMEM;
	}
	for (i = 0; i < vm->ncpus && !ret; i++) {
		vm->vcpus[i] = vcpu__create(vm, i);
		if (!vm->vcpus[i]) {
			ret = -errno;
			err__set(err, errlen, "creating vcpu%u: %s", i,
				 strerror(errno));
			break;
		}
		ret = cpu__set_cpuid(vm->vcpus[i]->fd, cpuid, i, vm->ncpus);
		if (ret)
			err__set(err, errlen, "KVM_SET_CPUID2 on vcpu%u: %s",
				 i, strerror(-ret));
	}
	free(cpuid);
	return ret;
}

/* vm_run's kick: every vCPU out of KVM_RUN, to see a stop or a pause. */
static void kick_all(void *opaque)
{
	struct vm *vm = opaque;
	unsigned int i;

	for (i = 0; i < vm->ncpus; i++)
		if (vm->vcpus && vm->vcpus[i])
			vcpu__kick(vm->vcpus[i]);
}

int vm__create(struct vm *vm, const struct vm_config *cfg,
	       const struct serial_backend *console, char *err, size_t errlen)
{
	int ret;

	memset(vm, 0, sizeof(*vm));
	vm->kvm_fd = vm->vm_fd = -1;
	vm->ncpus = cfg->ncpus;
	bus__init(&vm->pio, "pio");
	bus__init(&vm->mmio, "mmio");
	ret = vm_run__init(&vm->run, kick_all, vm);
	if (ret) {
		err__set(err, errlen, "eventfd: %s", strerror(-ret));
		goto err;
	}

	ret = vm_open_kvm(vm, err, errlen);
	if (ret)
		goto err;
	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0) {
		ret = -errno;
		err__set(err, errlen, "KVM_CREATE_VM: %s", strerror(-ret));
		goto err;
	}
	ret = vm_setup_ram(vm, cfg->mem_size, err, errlen);
	if (!ret && vm_config__registers_ram(cfg))
		ret = vm_pin_ram(vm, err, errlen);
	if (!ret)
		ret = irqchip__setup(vm->vm_fd, err, errlen);
	if (!ret)
		ret = vm_setup_devices(vm, cfg, console, err, errlen);
	if (!ret)
		ret = vm_disk__setup_all(vm, cfg, err, errlen);
	if (!ret)
		ret = vm_create_vcpus(vm, err, errlen);
	if (!ret && cfg->churn_kib) {
		vm->churn = vm_churn__create(vm, cfg->churn_kib, cfg->churn_hz);
		if (!vm->churn) {
			err__set(err, errlen, "no memory for --churn");
			ret = -ENOMEM;
		}
	}
	if (ret)
		goto err;
	return 0;
err:
	vm__destroy(vm);
	return ret ? ret : -EINVAL;
}

int vm__load(struct vm *vm, const struct boot_files *files, char *err,
	     size_t errlen)
{
	struct boot_ram ram = {
		.base = vm->ram,
		.lowmem_size = vm->lowmem_size,
		.ram_size = vm->ram_size,
	};
	struct acpi_pci_host pci = {
		.mmio_base = PCI_MMIO_START,
		.mmio_size = PCI_MMIO_SIZE,
	};
	struct acpi_virtio_mmio virtio[VM_DISKS_MAX];
	struct boot_files f = *files;
	struct boot_info info;
	unsigned int i, n = 0;
	int ret;

	for (i = 0; i < vm->ndisks; i++)
		if (vm->disk_mmio[i])
			virtio[n++] = (struct acpi_virtio_mmio) {
				.base = virtio_mmio__base(vm->disk_mmio[i]),
				.size = VIRTIO_MMIO_WINDOW,
				.gsi = virtio_mmio__gsi(vm->disk_mmio[i]),
			};
	ret = acpi__build(vm->ram, vm->lowmem_size, vm->ncpus,
			  vm->pci ? &pci : NULL, virtio, n);
	if (ret) {
		return err__set(err, errlen, "building ACPI tables: %s",
				strerror(-ret));
	}
	f.acpi_rsdp = ACPI_RSDP_START;
	if (boot__load(&ram, &f, &info, err, errlen))
		return -1;
	ret = cpu__setup_boot_regs(vm->vcpus[0]->fd, info.entry,
				   ZERO_PAGE_START);
	if (ret) {
		return err__set(err, errlen, "setting up the boot vCPU: %s",
				strerror(-ret));
	}
	return 0;
}

int vm__start(struct vm *vm)
{
	unsigned int i;
	int ret;

	ret = vm_churn__start(vm->churn);
	if (ret)
		return ret;
	for (i = 0; i < vm->ncpus; i++) {
		ret = vcpu__start(vm->vcpus[i]);
		if (ret) {
			vm_run__request_stop(&vm->run, VM_STOP_ERROR, 0);
			return ret;
		}
	}
	return 0;
}

void vm__join(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->ncpus; i++)
		if (vm->vcpus && vm->vcpus[i])
			vcpu__kick(vm->vcpus[i]);
	for (i = 0; i < vm->ncpus; i++)
		if (vm->vcpus && vm->vcpus[i])
			vcpu__join(vm->vcpus[i]);
	vm_churn__join(vm->churn);
	vm__print_disk_stats(vm, stderr);
}

void vm__print_disk_stats(const struct vm *vm, FILE *out)
{
	unsigned int i;

	for (i = 0; i < vm->ndisks; i++)
		virtio_blk__print_stats(vm->disks[i], out);
}

void vm__print_state(const struct vm *vm)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	unsigned int i;

	/* Through a buffer, to reach a raw terminal with carriage returns. */
	if (!mem)
		return;
	vm__print_disk_stats(vm, mem);
	for (i = 0; i < vm->ndisks; i++)
		virtio_blk__print_rings(vm->disks[i], mem);
	for (i = 0; i < vm->ncpus && vm->vcpus; i++)
		vcpu__print_state(vm->vcpus[i], mem);
	if (!fclose(mem))
		console__write_lines(stderr, text, len);
	free(text);
	for (i = 0; i < vm->ncpus && vm->vcpus; i++)
		vcpu__request_regs(vm->vcpus[i]);
}

void vm__counters(const struct vm *vm, counter_fn fn, void *opaque)
{
	unsigned int i;

	for (i = 0; i < vm->ndisks; i++)
		virtio_blk__counters(vm->disks[i], fn, opaque);
}

void vm__destroy(struct vm *vm)
{
	unsigned int i;

	if (vm->vcpus) {
		for (i = 0; i < vm->ncpus; i++)
			vcpu__destroy(vm->vcpus[i]);
		free(vm->vcpus);
		vm->vcpus = NULL;
	}
	vm_churn__destroy(vm->churn);
	vm->churn = NULL;
	vm_disk__destroy_all(vm);
	/* after the disks: nothing is in flight on the pinned pages now */
	vm_pinned_ram__destroy(vm->pinned_ram);
	vm->pinned_ram = NULL;
	serial__destroy(vm->serial);
	vm->serial = NULL;
	acpi_pm__destroy(vm->acpi_pm);
	vm->acpi_pm = NULL;
	pvpanic__destroy(vm->pvpanic);
	vm->pvpanic = NULL;
	if (vm->ram)
		munmap(vm->ram, vm->ram_size);
	vm->ram = NULL;
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	vm_run__exit(&vm->run);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	vm->vm_fd = vm->kvm_fd = -1;
}
