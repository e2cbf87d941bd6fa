// SPDX-License-Identifier: GPL-2.0-only
#include <inttypes.h>
#include <string.h>

#include "config/apply.h"
#include "config/host_defaults.h"
#include "log.h"

/*
 * What the domain says of a disk is the route's word; what it leaves out
 * (no gpin:disk pin=, no io='io_uring'; no service=, no io='threads'; no
 * <address>) is CONFIG_FROM_DEFAULT, for the host defaults to fill.  The
 * domain route's own default pin is kernel (docs/LIBVIRT.md).
 */
static int apply_disk(const struct domain_disk *disk, struct disk_config *out,
		      char *err, size_t errlen)
{
	disk_config__init(out);
	if (vm_config__set_string(out->path, sizeof(out->path), disk->path,
				  disk->target, err, errlen))
		return -1;
	out->ro = disk->readonly;
	out->queues = disk->queues;
	out->no_event_idx = disk->no_event_idx;
	out->iops = disk->iops;
	out->bps = disk->bps;
	out->pin = DISK_PIN_KERNEL;
	if (disk->pin != DISK_PIN_DEFAULT) {
		out->pin = disk->pin;
		out->pin_from = CONFIG_FROM_ROUTE;
	}
	out->io = disk->service;
	if (disk->service_set)
		out->io_from = CONFIG_FROM_ROUTE;
	if (disk->bus != DOMAIN_BUS_DEFAULT) {
		out->transport = disk->bus == DOMAIN_BUS_PCI ?
				 DISK_TRANSPORT_PCI : DISK_TRANSPORT_MMIO;
		out->transport_from = CONFIG_FROM_ROUTE;
	}
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

/* Where a disk setting came from, for --print-config. */
static void print_from(FILE *out, const char *what, enum config_from from,
		       const char *route, const struct host_defaults *host,
		       unsigned int line)
{
	if (from == CONFIG_FROM_HOST)
		fprintf(out, "%s %s:%u", what, host->path, line);
	else
		fprintf(out, "%s %s", what, from == CONFIG_FROM_ROUTE ? route :
			"default");
}

static void print_disk(FILE *out, const struct disk_config *k, unsigned int i,
		       const struct domain_disk *dk, const char *route,
		       const struct host_defaults *host)
{
	if (dk)
		fprintf(out, "disk %s: %s %s%s, io=%s, ", dk->target,
			dk->type == DOMAIN_DISK_BLOCK ? "block" : "file",
			k->path, k->ro ? " (read-only)" : "",
			domain__aio_name(dk->aio));
	else
		fprintf(out, "disk blk%u: %s%s, ", i, k->path,
			k->ro ? " (read-only)" : "");
	fprintf(out, "queues=%s%.0u, pin=%s, service=%s, transport=%s%s",
		k->queues ? "" : "one per vCPU", k->queues,
		k->pin == DISK_PIN_DEFAULT ?
		"default (fast with /dev/gpin, else kernel)" :
		disk_pin__name(k->pin), disk_io__name(k->io),
		disk_transport__name(k->transport),
		k->no_event_idx ? ", event_idx=off" : "");
	if (k->iops)
		fprintf(out, ", iops=%llu", (unsigned long long)k->iops);
	if (k->bps)
		fprintf(out, ", bps=%llu", (unsigned long long)k->bps);
	if (k->poll_us)
		fprintf(out, ", poll=%u", k->poll_us);
	if (k->irq_hold_us == DISK_IRQ_HOLD_AUTO)
		fprintf(out, ", irq_hold=auto");
	else
		fprintf(out, ", irq_hold=%d", k->irq_hold_us);
	print_from(out, "; from: pin", k->pin_from, route, host,
		   host ? host->pin_line : 0);
	if (k->pin_from == CONFIG_FROM_DEFAULT && k->pin_why[0])
		fprintf(out, " (%s)", k->pin_why);
	print_from(out, ", service", k->io_from, route, host,
		   host ? host->io_line : 0);
	print_from(out, ", transport", k->transport_from, route, host,
		   host ? host->transport_line : 0);
	fputc('\n', out);
}

void config__print(FILE *out, const struct vm_config *cfg,
		   const struct host_defaults *host, const struct domain *d)
{
	const char *route = d ? "domain" : "command line";
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
	if (d)
		fprintf(out, "on_poweroff: destroy\non_reboot: destroy\n"
			"on_crash: destroy\n");
	if (host)
		host_defaults__print(out, host);
	for (i = 0; i < cfg->ndisks; i++)
		print_disk(out, &cfg->disks[i], i,
			   d && i < d->ndisks ? &d->disks[i] : NULL, route,
			   host);
}
