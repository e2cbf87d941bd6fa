// SPDX-License-Identifier: GPL-2.0-only
#include <inttypes.h>
#include <string.h>

#include "config/apply.h"

/* The domain's disk as a --disk value, parsed by the --disk parser. */
static int apply_disk(const struct domain_disk *disk, struct disk_options *out,
		      char *err, size_t errlen)
{
	char spec[PATH_MAX + 96], why[256];
	int n;

	if (strchr(disk->path, ','))
		return snprintf(err, errlen, "disk '%s': gpin-vmm cannot take a "
				"path with a comma (%s)", disk->target,
				disk->path), -1;
	n = snprintf(spec, sizeof(spec), "%s%s,pin=%s,io=%s", disk->path,
		     disk->readonly ? ",ro" : "", domain__pin_name(disk->pin),
		     domain__service_name(disk->service));
	if (disk->queues && n > 0 && (size_t)n < sizeof(spec))
		n += snprintf(spec + n, sizeof(spec) - n, ",queues=%u",
			      disk->queues);
	if (disk->no_event_idx && n > 0 && (size_t)n < sizeof(spec))
		n += snprintf(spec + n, sizeof(spec) - n, ",event_idx=off");
	if (disk->bus != DOMAIN_BUS_DEFAULT && n > 0 && (size_t)n < sizeof(spec))
		n += snprintf(spec + n, sizeof(spec) - n, ",transport=%s",
			      disk->bus == DOMAIN_BUS_PCI ? "pci" : "mmio");
	if (n < 0 || (size_t)n >= sizeof(spec))
		return snprintf(err, errlen, "disk '%s': path too long",
				disk->target), -1;
	if (options__parse_disk(spec, out, why, sizeof(why)))
		return snprintf(err, errlen, "disk '%s': %s", disk->target,
				why), -1;
	return 0;
}

int config__apply_domain(const struct domain *d, struct vm_options *opts,
			 char *err, size_t errlen)
{
	unsigned int i;

	opts->kernel = d->kernel;
	opts->initrd = d->initrd;
	opts->cmdline = d->cmdline ? d->cmdline : DEFAULT_CMDLINE;
	opts->ncpus = d->vcpus;
	opts->mem_size = d->mem_bytes;
	opts->mem_locked = d->mem_locked;
	opts->console_pty = d->console == DOMAIN_CONSOLE_PTY;
	if (d->ndisks > VM_DISKS_MAX)
		return snprintf(err, errlen, "%u disks; gpin-vmm serves %d",
				d->ndisks, VM_DISKS_MAX), -1;
	for (i = 0; i < d->ndisks; i++)
		if (apply_disk(&d->disks[i], &opts->disks[i], err, errlen))
			return -1;
	opts->ndisks = d->ndisks;
	return 0;
}

static const char *console_name(const struct vm_options *opts)
{
	if (opts->console_pty)
		return "pty (a new pseudo-terminal; its path is printed)";
	return "stdio (this terminal)";
}

void config__print(FILE *out, const struct vm_options *opts,
		   const struct domain *d)
{
	unsigned int i;

	if (d && d->name)
		fprintf(out, "name: %s\n", d->name);
	fprintf(out, "kernel: %s\n", opts->kernel ? opts->kernel : "(none)");
	fprintf(out, "initrd: %s\n", opts->initrd ? opts->initrd : "(none)");
	fprintf(out, "cmdline: %s\n", opts->cmdline);
	fprintf(out, "vcpus: %u\n", opts->ncpus);
	fprintf(out, "memory: %" PRIu64 " bytes (%" PRIu64 " MiB)\n",
		opts->mem_size, opts->mem_size >> 20);
	fprintf(out, "memory-locked: %s\n", opts->mem_locked ? "yes" : "no");
	fprintf(out, "console: %s\n", console_name(opts));
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
