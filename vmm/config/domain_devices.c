// SPDX-License-Identifier: GPL-2.0-only
/*
 * A domain's <devices> (disks and the console) and gpin's metadata about
 * them: config/domain.c's walk hands those elements here.
 */
#include <stdlib.h>
#include <string.h>

#include "config/domain.h"
#include "config/domain_parse.h"
#include "config/xml.h"

static int parse_driver(struct parse_ctx *c, const xmlNode *n,
			struct domain_disk *disk)
{
	static const char *const attrs[] = { "name", "type", "cache", "io",
					     "queues", "event_idx", NULL };
	char *name = xml_attr(n, "name"), *type = xml_attr(n, "type");
	char *cache = xml_attr(n, "cache"), *io = xml_attr(n, "io");
	char *queues = xml_attr(n, "queues"), *event_idx = xml_attr(n, "event_idx");
	uint64_t q;
	int ret = xml_check_attrs(c, n, attrs);

	if (!ret && name && strcmp(name, "qemu"))
		ret = xml_fail(c, n, "<driver name='%s'>: only 'qemu' (libvirt's "
			       "name for the raw host driver)", name);
	if (!ret && type && strcmp(type, "raw"))
		ret = xml_fail(c, n, "<driver type='%s'>: gpin-vmm serves raw "
			       "images only", type);
	if (!ret && cache && strcmp(cache, "none") && strcmp(cache, "directsync"))
		ret = xml_fail(c, n, "<driver cache='%s'>: gpin-vmm always does direct "
			       "I/O (cache='none')", cache);
	if (!ret && io) {
		if (!strcmp(io, "native"))
			disk->aio = DOMAIN_AIO_NATIVE;
		else if (!strcmp(io, "io_uring"))
			disk->aio = DOMAIN_AIO_IO_URING;
		else if (!strcmp(io, "threads"))
			disk->aio = DOMAIN_AIO_THREADS;
		else
			ret = xml_fail(c, n, "<driver io='%s'> is not supported", io);
	}
	if (!ret && queues) {
		if (xml_parse_u64(queues, &q) || q < 1 || q > DOMAIN_QUEUES_MAX)
			ret = xml_fail(c, n, "<driver queues='%s'>: expected 1 to %d",
				       queues, DOMAIN_QUEUES_MAX);
		else
			disk->queues = q;
	}
	/* the schema allows on|off only */
	if (!ret && event_idx)
		disk->no_event_idx = !strcmp(event_idx, "off");
	xmlFree(name);
	xmlFree(type);
	xmlFree(cache);
	xmlFree(io);
	xmlFree(queues);
	xmlFree(event_idx);
	return ret ?: xml_no_children(c, n);
}

static int parse_source(struct parse_ctx *c, const xmlNode *n,
			struct domain_disk *disk)
{
	const char *key = disk->type == DOMAIN_DISK_FILE ? "file" : "dev";
	const char *const attrs[] = { key, NULL };
	char *path;

	if (xml_check_attrs(c, n, attrs) || xml_no_children(c, n))
		return -1;
	path = xml_attr(n, key);
	if (!path || !*path) {
		xmlFree(path);
		return xml_fail(c, n, "<disk><source> has no %s= path", key);
	}
	free(disk->path);
	disk->path = strdup(path);
	xmlFree(path);
	return disk->path ? 0 : xml_fail(c, n, "out of memory");
}

static int parse_target(struct parse_ctx *c, const xmlNode *n,
			struct domain_disk *disk)
{
	static const char *const attrs[] = { "dev", "bus", NULL };
	char *dev = xml_attr(n, "dev"), *bus = xml_attr(n, "bus");
	int ret = xml_check_attrs(c, n, attrs) ?: xml_no_children(c, n);

	if (!ret && bus && strcmp(bus, "virtio"))
		ret = xml_fail(c, n, "<target bus='%s'>: unsupported disk bus; "
			       "gpin-vmm has virtio only", bus);
	if (!ret && (!dev || !*dev))
		ret = xml_fail(c, n, "<disk><target> needs dev=");
	if (!ret) {
		free(disk->target);
		disk->target = strdup(dev);
		if (!disk->target)
			ret = xml_fail(c, n, "out of memory");
	}
	xmlFree(dev);
	xmlFree(bus);
	return ret;
}

/* One <iotune> limit: a whole number in 1..@max. */
static int parse_limit(struct parse_ctx *c, const xmlNode *n, uint64_t max,
		       uint64_t *out)
{
	char *text = NULL;
	int ret = xml_take_text(c, n, &text);

	if (!ret && (xml_parse_u64(text, out) || !*out || *out > max))
		ret = xml_fail(c, n, "<%s>%s</%s>: expected 1 to %llu",
			       (const char *)n->name, text,
			       (const char *)n->name, (unsigned long long)max);
	free(text);
	return ret;
}

/*
 * <iotune>: libvirt's disk rate limits.  gpin-vmm limits a disk's
 * requests and its bytes as a whole (--disk iops=, bps=); the separate
 * read and write limits and the burst settings it does not have are
 * refused rather than ignored.
 */
static int parse_iotune(struct parse_ctx *c, const xmlNode *tn,
			struct domain_disk *disk)
{
	static const char *const none[] = { NULL };
	const xmlNode *n;
	int ret = xml_check_attrs(c, tn, none);

	for_each_child(n, tn) {
		if (ret)
			break;
		if (xml_is(n, "total_iops_sec"))
			ret = parse_limit(c, n, DISK_IOPS_MAX, &disk->iops);
		else if (xml_is(n, "total_bytes_sec"))
			ret = parse_limit(c, n, DISK_BPS_MAX, &disk->bps);
		else
			ret = xml_fail(c, n, "<iotune><%s> is not supported by "
				       "gpin-vmm (only total_iops_sec and "
				       "total_bytes_sec)", (const char *)n->name);
	}
	return ret;
}

/*
 * <address type='pci'|'virtio-mmio'>: the transport.  A PCI address's
 * domain, bus, slot and function are accepted (libvirt writes them into
 * every domain it saves) but gpin-vmm places the device itself.
 */
static int parse_address(struct parse_ctx *c, const xmlNode *n,
			 struct domain_disk *disk)
{
	static const char *const attrs[] = { "type", "domain", "bus", "slot",
					     "function", NULL };
	char *type = xml_attr(n, "type");
	int ret = xml_check_attrs(c, n, attrs) ?: xml_no_children(c, n);

	if (!ret && type && !strcmp(type, "pci"))
		disk->bus = DOMAIN_BUS_PCI;
	else if (!ret && type && !strcmp(type, "virtio-mmio"))
		disk->bus = DOMAIN_BUS_VIRTIO_MMIO;
	else if (!ret)
		ret = xml_fail(c, n, "<address type='%s'>: gpin-vmm's disks are "
			       "on 'pci' or 'virtio-mmio'", type ? type : "");
	xmlFree(type);
	return ret;
}

static int parse_disk(struct parse_ctx *c, const xmlNode *dn, struct domain *d)
{
	static const char *const attrs[] = { "type", "device", NULL };
	char *type = xml_attr(dn, "type"), *device = xml_attr(dn, "device");
	struct domain_disk *disk;
	const xmlNode *n;
	unsigned int i;
	int ret = xml_check_attrs(c, dn, attrs);

	if (!ret && d->ndisks == DOMAIN_DISKS_MAX)
		ret = xml_fail(c, dn, "more than %d disks", DOMAIN_DISKS_MAX);
	if (!ret && device && strcmp(device, "disk"))
		ret = xml_fail(c, dn, "<disk device='%s'> is not supported by gpin-vmm "
			       "(only 'disk')", device);
	disk = &d->disks[d->ndisks];
	*disk = (struct domain_disk) { 0 };
	if (!ret && type && !strcmp(type, "file"))
		disk->type = DOMAIN_DISK_FILE;
	else if (!ret && type && !strcmp(type, "block"))
		disk->type = DOMAIN_DISK_BLOCK;
	else if (!ret)
		ret = xml_fail(c, dn, "<disk type='%s'> is not supported by gpin-vmm "
			       "(only 'file' and 'block')", type ? type : "");
	xmlFree(type);
	xmlFree(device);
	if (ret)
		return -1;
	d->ndisks++;	/* from here domain__free() owns its strings */
	for_each_child(n, dn) {
		if (xml_is(n, "driver"))
			ret = parse_driver(c, n, disk);
		else if (xml_is(n, "source"))
			ret = parse_source(c, n, disk);
		else if (xml_is(n, "target"))
			ret = parse_target(c, n, disk);
		else if (xml_is(n, "address"))
			ret = parse_address(c, n, disk);
		else if (xml_is(n, "readonly"))
			ret = xml_check_flag(c, n);
		else if (xml_is(n, "iotune"))
			ret = parse_iotune(c, n, disk);
		else
			ret = xml_unsupported(c, n);
		if (ret)
			return -1;
		if (xml_is(n, "readonly"))
			disk->readonly = true;
	}
	if (!disk->path)
		return xml_fail(c, dn, "<disk> has no <source>: gpin-vmm needs the "
				"backing file or device");
	if (!disk->target)
		return xml_fail(c, dn, "<disk> has no <target dev=…>");
	for (i = 0; i + 1 < d->ndisks; i++)
		if (!strcmp(d->disks[i].target, disk->target))
			return xml_fail(c, dn, "two disks with target '%s'",
					disk->target);
	return 0;
}

/*
 * <serial> and <console>: the one UART.  type='pty' gives it a new
 * pseudo-terminal; type='stdio' (or neither element) the VMM's terminal.
 */
static int parse_chardev(struct parse_ctx *c, const xmlNode *cn,
			 struct domain *d, bool *seen)
{
	static const char *const attrs[] = { "type", NULL };
	static const char *const target_attrs[] = { "type", "port", NULL };
	char *type = xml_attr(cn, "type");
	enum domain_console kind = DOMAIN_CONSOLE_STDIO;
	const xmlNode *n;
	int ret = xml_check_attrs(c, cn, attrs);

	if (!ret && type && !strcmp(type, "pty"))
		kind = DOMAIN_CONSOLE_PTY;
	else if (!ret && (!type || strcmp(type, "stdio")))
		ret = xml_fail(c, cn, "<%s type='%s'> is not supported by gpin-vmm "
			       "(pty or stdio)", cn->name, type ? type : "");
	xmlFree(type);
	if (!ret && *seen && kind != d->console)
		ret = xml_fail(c, cn, "<%s>: gpin-vmm has one UART; <serial> and "
			       "<console> must be of the same type", cn->name);
	for_each_child(n, cn) {
		char *ttype, *port;

		if (ret)
			break;
		if (!xml_is(n, "target")) {
			ret = xml_unsupported(c, n);
			break;
		}
		ret = xml_check_attrs(c, n, target_attrs) ?: xml_no_children(c, n);
		ttype = xml_attr(n, "type");
		port = xml_attr(n, "port");
		if (!ret && port && strcmp(port, "0"))
			ret = xml_fail(c, n, "<%s><target port='%s'>: one UART, port 0",
				       cn->name, port);
		if (!ret && ttype && strcmp(ttype, "serial") &&
		    strcmp(ttype, "isa-serial") && strcmp(ttype, "virtio"))
			ret = xml_fail(c, n, "<%s><target type='%s'> is not supported "
				       "by gpin-vmm", cn->name, ttype);
		xmlFree(ttype);
		xmlFree(port);
	}
	d->console = kind;
	*seen = true;
	return ret;
}

int domain_parse_devices(struct parse_ctx *c, const xmlNode *devs,
			 struct domain *d)
{
	bool serial = false, console = false, chardev = false;
	const xmlNode *n;
	int ret;

	if (xml_check_attrs(c, devs, xml_no_attrs))
		return -1;
	for_each_child(n, devs) {
		if (xml_is(n, "emulator")) {
			ret = xml_check_attrs(c, n, xml_no_attrs) ?:
			      xml_take_text(c, n, &d->emulator);
		} else if (xml_is(n, "disk")) {
			ret = parse_disk(c, n, d);
		} else if (xml_is(n, "serial") || xml_is(n, "console")) {
			bool *once = xml_is(n, "serial") ? &serial : &console;

			if (*once)
				return xml_fail(c, n, "more than one <%s>: gpin-vmm "
						"has one UART", n->name);
			*once = true;
			ret = parse_chardev(c, n, d, &chardev);
		} else {
			ret = xml_unsupported(c, n);
		}
		if (ret)
			return -1;
	}
	return 0;
}

static int parse_gpin_disk(struct parse_ctx *c, const xmlNode *n,
			   struct domain *d)
{
	static const char *const attrs[] = { "target", "pin", "service", NULL };
	char *target = xml_attr(n, "target"), *pin = xml_attr(n, "pin");
	char *service = xml_attr(n, "service");
	struct domain_disk *disk = NULL;
	unsigned int i;
	int ret = xml_check_attrs(c, n, attrs) ?: xml_no_children(c, n);

	if (!ret && !target)
		ret = xml_fail(c, n, "<gpin:disk> needs target=");
	for (i = 0; !ret && i < d->ndisks; i++)
		if (!strcmp(d->disks[i].target, target))
			disk = &d->disks[i];
	if (!ret && !disk)
		ret = xml_fail(c, n, "<gpin:disk target='%s'>: no such disk", target);
	if (!ret && pin) {
		int v = config__word(disk_pin_words, (const char *)pin);

		if (v < 0)
			ret = xml_fail(c, n, "<gpin:disk pin='%s'>: expected "
				       DISK_PIN_EXPECT, pin);
		else
			disk->pin = v;
	}
	if (!ret && service) {
		int v = config__word(disk_io_words, (const char *)service);

		if (v < 0)
			ret = xml_fail(c, n, "<gpin:disk service='%s'>: expected "
				       DISK_IO_EXPECT, service);
		else
			disk->service = v;
		disk->service_set = true;
	}
	xmlFree(target);
	xmlFree(pin);
	xmlFree(service);
	return ret;
}

static bool in_gpin_ns(const xmlNode *n)
{
	return n->ns && n->ns->href &&
	       !strcmp((const char *)n->ns->href, DOMAIN_GPIN_NS);
}

int domain_parse_metadata(struct parse_ctx *c, const xmlNode *md,
			  struct domain *d)
{
	const xmlNode *top, *n;
	bool seen = false;

	for_each_child(top, md) {
		/* Other programs' metadata is theirs. */
		if (!in_gpin_ns(top))
			continue;
		if (!xml_is(top, "vmm") || seen)
			return xml_fail(c, top, "<metadata>: gpin's namespace holds one "
					"<vmm> element, not <%s>", top->name);
		seen = true;
		if (xml_check_attrs(c, top, xml_no_attrs))
			return -1;
		for_each_child(n, top) {
			if (in_gpin_ns(n) && xml_is(n, "test-exit-port")) {
				if (xml_check_flag(c, n))
					return -1;
				d->test_exit_port = true;
				continue;
			}
			if (!in_gpin_ns(n) || !xml_is(n, "disk"))
				return xml_fail(c, n, "<gpin:vmm><%s> is not known to "
						"gpin-vmm", n->name);
			if (parse_gpin_disk(c, n, d))
				return -1;
		}
	}
	return 0;
}

/*
 * <driver io=…> against the metadata: io_uring means the host kernel
 * pins, so a gpin.ko pin mode contradicts it; io='threads' means I/O
 * threads serve the queues.
 */
int domain_reconcile_disks(struct parse_ctx *c, const xmlNode *root,
			   struct domain *d)
{
	unsigned int i;

	for (i = 0; i < d->ndisks; i++) {
		struct domain_disk *disk = &d->disks[i];

		if (disk->aio == DOMAIN_AIO_IO_URING) {
			if (disk->pin != DISK_PIN_DEFAULT &&
			    disk->pin != DISK_PIN_KERNEL)
				return xml_fail(c, root, "disk '%s': <driver "
						"io='io_uring'> pins in the host "
						"kernel; gpin:disk pin='%s' needs "
						"io='native'", disk->target,
						disk_pin__name(disk->pin));
			disk->pin = DISK_PIN_KERNEL;
		}
		if (disk->aio == DOMAIN_AIO_THREADS) {
			if (disk->service_set &&
			    disk->service != DISK_IO_IOTHREAD)
				return xml_fail(c, root, "disk '%s': <driver io='threads'> "
						"and gpin:disk service='vcpu' disagree",
						disk->target);
			disk->service = DISK_IO_IOTHREAD;
			disk->service_set = true;
		}
	}
	return 0;
}
