// SPDX-License-Identifier: GPL-2.0-only
#include <inttypes.h>
#include <string.h>

#include "config/apply.h"
#include "log.h"

static const enum disk_pin domain_pins[] = {
	[DOMAIN_PIN_KERNEL] = DISK_PIN_KERNEL,
	[DOMAIN_PIN_FAST] = DISK_PIN_FAST,
	[DOMAIN_PIN_LOCKED] = DISK_PIN_LOCKED,
};

static int apply_disk(const struct domain_disk *disk, struct disk_config *out,
		      char *err, size_t errlen)
{
	disk_config__init(out);
	if (strlen(disk->path) >= sizeof(out->path))
		return err__set(err, errlen, "disk '%s': path too long",
				disk->target);
	strcpy(out->path, disk->path);
	out->ro = disk->readonly;
	out->pin = domain_pins[disk->pin];
	out->io = disk->service == DOMAIN_SERVICE_IOTHREAD ?
		  DISK_IO_IOTHREAD : DISK_IO_VCPU;
	out->queues = disk->queues;
	out->no_event_idx = disk->no_event_idx;
	out->transport = disk->bus == DOMAIN_BUS_PCI ? DISK_TRANSPORT_PCI :
			 DISK_TRANSPORT_MMIO;
	return 0;
}

int config__apply_domain(const struct domain *d, struct vm_config *cfg,
			 char *err, size_t errlen)
{
	unsigned int i;

	if (vm_config__set_string(cfg->kernel, sizeof(cfg->kernel), d->kernel,
				  "<kernel>", err, errlen) ||
	    vm_config__set_string(cfg->initrd, sizeof(cfg->initrd),
				  d->initrd ? d->initrd : "", "<initrd>", err,
				  errlen) ||
	    vm_config__set_string(cfg->cmdline, sizeof(cfg->cmdline),
				  d->cmdline ? d->cmdline : DEFAULT_CMDLINE,
				  "<cmdline>", err, errlen))
		return -1;
	cfg->ncpus = d->vcpus;
	cfg->mem_size = d->mem_bytes;
	cfg->mem_locked = d->mem_locked;
	cfg->console = d->console == DOMAIN_CONSOLE_PTY ? VM_CONSOLE_PTY :
			VM_CONSOLE_STDIO;
	if (d->ndisks > VM_DISKS_MAX)
		return err__set(err, errlen, "%u disks; gpin-vmm serves %d",
				d->ndisks, VM_DISKS_MAX);
	for (i = 0; i < d->ndisks; i++)
		if (apply_disk(&d->disks[i], &cfg->disks[i], err, errlen))
			return -1;
	cfg->ndisks = d->ndisks;
	cfg->test_exit_port |= d->test_exit_port;
	return 0;
}

static const char *console_name(enum vm_console c)
{
	switch (c) {
	case VM_CONSOLE_PTY:
		return "pty (a new pseudo-terminal; its path is printed)";
	case VM_CONSOLE_STDOUT:
		return "stdout (output only)";
	case VM_CONSOLE_OFF:
		return "off";
	case VM_CONSOLE_STDIO:
		break;
	}
	return "stdio (this terminal)";
}

void config__print(FILE *out, const struct vm_config *cfg,
		   const struct domain *d)
{
	unsigned int i;

	if (d && d->name)
		fprintf(out, "name: %s\n", d->name);
	fprintf(out, "kernel: %s\n", cfg->kernel[0] ? cfg->kernel : "(none)");
	fprintf(out, "initrd: %s\n", cfg->initrd[0] ? cfg->initrd : "(none)");
	fprintf(out, "cmdline: %s\n", cfg->cmdline);
	fprintf(out, "vcpus: %u\n", cfg->ncpus);
	fprintf(out, "memory: %" PRIu64 " bytes (%" PRIu64 " MiB)\n",
		cfg->mem_size, cfg->mem_size >> 20);
	fprintf(out, "memory-locked: %s\n", cfg->mem_locked ? "yes" : "no");
	fprintf(out, "console: %s\n", console_name(cfg->console));
	if (cfg->test_exit_port)
		fprintf(out, "test-exit-port: on (port %#x)\n", PORT_EXIT);
	else
		fprintf(out, "test-exit-port: off\n");
	if (d) {
		fprintf(out, "on_poweroff: destroy\non_reboot: destroy\n"
			"on_crash: destroy\n");
		for (i = 0; i < d->ndisks; i++) {
			const struct domain_disk *k = &d->disks[i];

			fprintf(out, "disk %s: %s %s%s, io=%s, queues=%s%.0u, "
				"pin=%s, service=%s%s\n", k->target,
				k->type == DOMAIN_DISK_BLOCK ? "block" : "file",
				k->path, k->readonly ? " (read-only)" : "",
				domain__aio_name(k->aio),
				k->queues ? "" : "one per vCPU", k->queues,
				domain__pin_name(k->pin),
				domain__service_name(k->service),
				k->no_event_idx ? ", event_idx=off" : "");
		}
	}
}
