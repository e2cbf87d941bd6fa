// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libgpin.h"

#include "log.h"
#include "vm_config.h"

void vm_config__init(struct vm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	strcpy(cfg->cmdline, DEFAULT_CMDLINE);
	cfg->ncpus = 1;
	cfg->mem_size = DEFAULT_MEM;
	cfg->console = VM_CONSOLE_STDIO;
}

void disk_config__init(struct disk_config *d)
{
	memset(d, 0, sizeof(*d));
	d->pin = DISK_PIN_DEFAULT;
	d->io = DISK_IO_VCPU;
	d->transport = DISK_TRANSPORT_PCI;
	d->irq_hold_us = DISK_IRQ_HOLD_AUTO;
}

int vm_config__set_string(char *field, size_t size, const char *src,
			  const char *what, char *err, size_t errlen)
{
	size_t len = strlen(src);

	if (len >= size)
		return err__set(err, errlen, "%s: longer than %zu bytes", what,
				size - 1);
	memcpy(field, src, len + 1);
	return 0;
}

const char *const disk_pin_words[] = {
	[DISK_PIN_DEFAULT] = "", [DISK_PIN_KERNEL] = "kernel",
	[DISK_PIN_FAST] = "fast", [DISK_PIN_LOCKED] = "locked",
	[DISK_PIN_REGISTERED] = "registered", NULL,
};
const char *const disk_io_words[] = {
	[DISK_IO_VCPU] = "vcpu", [DISK_IO_IOTHREAD] = "iothread", NULL,
};
const char *const disk_transport_words[] = {
	[DISK_TRANSPORT_MMIO] = "mmio", [DISK_TRANSPORT_PCI] = "pci", NULL,
};

/*
 * Whether this process can use gpin.ko: the device opened for real (it
 * may exist and still be the module's 0600 root-only node, or a group
 * this user is not in).  @why says what was found either way.
 */
static bool gpin_usable(char *why, size_t len)
{
	struct libgpin *g = libgpin_open();

	if (g) {
		libgpin_close(g);
		snprintf(why, len, GPIN_DEVICE_PATH " opens");
		return true;
	}
	if (errno == ENOENT)
		snprintf(why, len, "no " GPIN_DEVICE_PATH ": gpin.ko not loaded");
	else
		snprintf(why, len, GPIN_DEVICE_PATH " does not open: %s",
			 strerror(errno));
	return false;
}

void vm_config__resolve(struct vm_config *cfg)
{
	unsigned int i;

	for (i = 0; i < cfg->ndisks; i++) {
		struct disk_config *d = &cfg->disks[i];

		if (d->pin != DISK_PIN_DEFAULT)
			continue;
		d->pin = gpin_usable(d->pin_why, sizeof(d->pin_why)) ?
			 DISK_PIN_FAST : DISK_PIN_KERNEL;
		pr_info("blk%u: default pin=%s (%s)", i,
			disk_pin__name(d->pin), d->pin_why);
	}
}

bool vm_config__registers_ram(const struct vm_config *cfg)
{
	unsigned int i;

	for (i = 0; i < cfg->ndisks; i++)
		if (cfg->disks[i].pin == DISK_PIN_REGISTERED)
			return true;
	return false;
}

int config__word(const char *const *words, const char *word)
{
	int i;

	for (i = 0; words[i]; i++)
		if (words[i][0] && !strcmp(words[i], word))
			return i;
	return -1;
}

const char *disk_pin__name(enum disk_pin pin)
{
	return pin == DISK_PIN_DEFAULT ? "default" : disk_pin_words[pin];
}

const char *disk_io__name(enum disk_io io)
{
	return disk_io_words[io];
}

const char *disk_transport__name(enum disk_transport t)
{
	return disk_transport_words[t];
}

const char *config_from__name(enum config_from from)
{
	switch (from) {
	case CONFIG_FROM_HOST:
		return "host defaults";
	case CONFIG_FROM_ROUTE:
		return "given";
	case CONFIG_FROM_DEFAULT:
		break;
	}
	return "default";
}
