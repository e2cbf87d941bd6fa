// SPDX-License-Identifier: GPL-2.0-only
/*
 * libvirt domain XML → struct domain.  See domain.h for the contract.
 *
 * Order: parse (libxml2, no network, no entity expansion) → validate
 * against libvirt's RelaxNG schema → walk.  The walk accepts only what
 * is in its tables; the first element or attribute that gpin-vmm cannot
 * honour ends the parse with a message naming it and its line, because a
 * definition that silently loses a setting is worse than one refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/relaxng.h>
#include <libxml/tree.h>

#include "arch/x86/layout.h"
#include "config/domain.h"
#include "options.h"

struct parse_ctx {
	const char *name;	/* the document, for messages */
	char *err;
	size_t errlen;
	bool failed;		/* the first error is the one reported */
};

static int __attribute__((format(printf, 3, 4)))
fail(struct parse_ctx *c, const xmlNode *node, const char *fmt, ...)
{
	size_t n = 0;
	va_list ap;

	if (c->failed)
		return -1;
	c->failed = true;
	if (node)
		n = snprintf(c->err, c->errlen, "%s:%ld: ", c->name,
			     xmlGetLineNo(node));
	else
		n = snprintf(c->err, c->errlen, "%s: ", c->name);
	if (n >= c->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - n, fmt, ap);
	va_end(ap);
	return -1;
}

static bool is(const xmlNode *n, const char *name)
{
	return !strcmp((const char *)n->name, name);
}

static const xmlNode *next_element(const xmlNode *n)
{
	while (n && n->type != XML_ELEMENT_NODE)
		n = n->next;
	return n;
}

#define for_each_child(child, parent) \
	for (child = next_element((parent)->children); child; \
	     child = next_element(child->next))

static const char *parent_name(const xmlNode *n)
{
	return n->parent && n->parent->type == XML_ELEMENT_NODE ?
		(const char *)n->parent->name : "";
}

static int unsupported(struct parse_ctx *c, const xmlNode *n)
{
	return fail(c, n, "<%s><%s> is not supported by gpin-vmm",
		    parent_name(n), n->name);
}

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

/* Every attribute of @n must be in @allowed (NULL-terminated). */
static int check_attrs(struct parse_ctx *c, const xmlNode *n,
		       const char *const *allowed)
{
	const xmlAttr *a;

	for (a = n->properties; a; a = a->next)
		if (!in_list((const char *)a->name, allowed))
			return fail(c, n, "<%s %s=…> is not supported by gpin-vmm",
				    n->name, a->name);
	return 0;
}

static const char *const no_attrs[] = { NULL };

static int no_children(struct parse_ctx *c, const xmlNode *n)
{
	const xmlNode *child;

	for_each_child(child, n)
		return unsupported(c, child);
	return 0;
}

/* An element that must be empty and plain, such as <readonly/>. */
static int check_flag(struct parse_ctx *c, const xmlNode *n)
{
	return no_children(c, n) ?: check_attrs(c, n, no_attrs);
}

/* Attribute value or NULL; the string is libxml2's, to xmlFree(). */
static char *attr(const xmlNode *n, const char *name)
{
	return (char *)xmlGetProp(n, (const xmlChar *)name);
}

/* Text content with surrounding white space removed; malloc'd. */
static char *text(const xmlNode *n)
{
	xmlChar *raw = xmlNodeGetContent(n);
	const char *s = (const char *)raw;
	size_t len;
	char *out;

	if (!raw)
		return strdup("");
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	len = strlen(s);
	while (len && strchr(" \t\n\r", s[len - 1]))
		len--;
	out = strndup(s, len);
	xmlFree(raw);
	return out;
}

/* Replaces *@dst with the text of @n; 0 or -1 (out of memory). */
static int take_text(struct parse_ctx *c, const xmlNode *n, char **dst)
{
	if (no_children(c, n))
		return -1;
	free(*dst);
	*dst = text(n);
	return *dst ? 0 : fail(c, n, "out of memory");
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

/*
 * libvirt's scaled integers: b/bytes; k, KiB (1024) and KB (1000); the
 * same for M, G, T, P, E.  No unit is KiB.  Case-insensitive, as libvirt.
 */
static int unit_scale(const char *unit, uint64_t *scale)
{
	static const char prefixes[] = "kmgtpe";
	const char *p;
	uint64_t base, s = 1;
	int i;

	if (!unit || !*unit) {
		*scale = 1024;
		return 0;
	}
	if (!strcasecmp(unit, "b") || !strcasecmp(unit, "byte") ||
	    !strcasecmp(unit, "bytes")) {
		*scale = 1;
		return 0;
	}
	p = strchr(prefixes, unit[0] | 0x20);
	if (!p || !unit[0])
		return -1;
	if (!unit[1] || !strcasecmp(unit + 1, "ib"))
		base = 1024;
	else if (!strcasecmp(unit + 1, "b"))
		base = 1000;
	else
		return -1;
	for (i = 0; i <= p - prefixes; i++)
		s *= base;
	*scale = s;
	return 0;
}

static int parse_memory(struct parse_ctx *c, const xmlNode *n, uint64_t *bytes)
{
	static const char *const attrs[] = { "unit", NULL };
	char *unit = attr(n, "unit"), *val = NULL;
	uint64_t v, scale;
	int ret = -1;

	if (check_attrs(c, n, attrs) || take_text(c, n, &val))
		goto out;
	if (unit_scale(unit, &scale)) {
		fail(c, n, "<%s unit='%s'>: unknown unit", n->name, unit);
		goto out;
	}
	if (parse_u64(val, &v)) {
		fail(c, n, "<%s>%s</%s>: expected a non-negative integer",
		     n->name, val, n->name);
		goto out;
	}
	if (__builtin_mul_overflow(v, scale, bytes)) {
		fail(c, n, "<%s>%s %s</%s>: too large", n->name, val,
		     unit ? unit : "KiB", n->name);
		goto out;
	}
	if (*bytes < GUEST_MEM_MIN || *bytes > GUEST_MEM_MAX) {
		fail(c, n, "<%s>: %llu bytes; gpin-vmm takes %llu MiB to %llu GiB",
		     n->name, (unsigned long long)*bytes,
		     (unsigned long long)(GUEST_MEM_MIN >> 20),
		     (unsigned long long)(GUEST_MEM_MAX >> 30));
		goto out;
	}
	ret = 0;
out:
	xmlFree(unit);
	free(val);
	return ret;
}

static int parse_vcpu(struct parse_ctx *c, const xmlNode *n, unsigned int *vcpus)
{
	static const char *const attrs[] = { "placement", "current", NULL };
	char *placement = attr(n, "placement"), *current = attr(n, "current");
	char *val = NULL;
	uint64_t v, cur;
	int ret = -1;

	if (check_attrs(c, n, attrs) || take_text(c, n, &val))
		goto out;
	if (placement && strcmp(placement, "static")) {
		fail(c, n, "<vcpu placement='%s'> is not supported by gpin-vmm "
		     "(only 'static')", placement);
		goto out;
	}
	if (parse_u64(val, &v) || v < 1 || v > VM_CPUS_MAX) {
		fail(c, n, "<vcpu>%s</vcpu>: expected 1 to %d", val, VM_CPUS_MAX);
		goto out;
	}
	if (current && (parse_u64(current, &cur) || cur != v)) {
		fail(c, n, "<vcpu current='%s'>: gpin-vmm has no vCPU hotplug; "
		     "current must equal the count", current);
		goto out;
	}
	*vcpus = v;
	ret = 0;
out:
	xmlFree(placement);
	xmlFree(current);
	free(val);
	return ret;
}

static int parse_os_type(struct parse_ctx *c, const xmlNode *n)
{
	static const char *const attrs[] = { "arch", NULL };
	char *arch = attr(n, "arch"), *val = NULL;
	int ret = -1;

	if (check_attrs(c, n, attrs) || take_text(c, n, &val))
		goto out;
	if (arch && strcmp(arch, "x86_64")) {
		fail(c, n, "<type arch='%s'>: gpin-vmm runs x86_64 guests", arch);
		goto out;
	}
	if (strcmp(val, "hvm")) {
		fail(c, n, "<os><type>%s</type>: only hvm", val);
		goto out;
	}
	ret = 0;
out:
	xmlFree(arch);
	free(val);
	return ret;
}

static int parse_os(struct parse_ctx *c, const xmlNode *os, struct domain *d)
{
	const xmlNode *n;

	if (check_attrs(c, os, no_attrs))
		return -1;
	for_each_child(n, os) {
		int ret;

		if (is(n, "type"))
			ret = parse_os_type(c, n);
		else if (is(n, "kernel"))
			ret = check_attrs(c, n, no_attrs) ?:
			      take_text(c, n, &d->kernel);
		else if (is(n, "initrd"))
			ret = check_attrs(c, n, no_attrs) ?:
			      take_text(c, n, &d->initrd);
		else if (is(n, "cmdline"))
			ret = check_attrs(c, n, no_attrs) ?:
			      take_text(c, n, &d->cmdline);
		else
			ret = unsupported(c, n);
		if (ret)
			return -1;
	}
	if (!d->kernel || !*d->kernel)
		return fail(c, os, "<os><kernel> is required: gpin-vmm boots a "
			    "Linux bzImage directly (no firmware, no boot device)");
	if (d->initrd && !*d->initrd)
		return fail(c, os, "<os><initrd> is empty");
	if (d->cmdline && strlen(d->cmdline) >= CMDLINE_MAX)
		return fail(c, os, "<os><cmdline> is longer than %d bytes",
			    CMDLINE_MAX - 1);
	return 0;
}

static int parse_action(struct parse_ctx *c, const xmlNode *n,
			enum domain_action *action)
{
	char *val = NULL;
	int ret;

	ret = check_attrs(c, n, no_attrs) ?: take_text(c, n, &val);
	if (!ret && strcmp(val, "destroy"))
		ret = fail(c, n, "<%s>%s</%s> is not supported by gpin-vmm: the "
			   "VMM exits when the guest stops (use destroy)",
			   n->name, val, n->name);
	if (!ret)
		*action = DOMAIN_ACTION_DESTROY;
	free(val);
	return ret;
}

static int parse_children_flags(struct parse_ctx *c, const xmlNode *parent,
				const char *const *allowed)
{
	const xmlNode *n;

	if (check_attrs(c, parent, no_attrs))
		return -1;
	for_each_child(n, parent)
		if (!in_list((const char *)n->name, allowed) ||
		    check_flag(c, n))
			return c->failed ? -1 : unsupported(c, n);
	return 0;
}

static int parse_memory_backing(struct parse_ctx *c, const xmlNode *mb,
				struct domain *d)
{
	static const char *const allowed[] = { "locked", NULL };

	if (parse_children_flags(c, mb, allowed))
		return -1;
	d->mem_locked = mb->children && next_element(mb->children);
	return 0;
}

static int parse_clock(struct parse_ctx *c, const xmlNode *n)
{
	static const char *const attrs[] = { "offset", NULL };
	char *offset = attr(n, "offset");
	int ret = check_attrs(c, n, attrs);

	if (!ret && offset && strcmp(offset, "utc"))
		ret = fail(c, n, "<clock offset='%s'>: gpin-vmm's RTC is the "
			   "host's UTC", offset);
	xmlFree(offset);
	return ret ?: no_children(c, n);
}

/* ---- devices ---- */

static int parse_driver(struct parse_ctx *c, const xmlNode *n,
			struct domain_disk *disk)
{
	static const char *const attrs[] = { "name", "type", "cache", "io",
					     "queues", "event_idx", NULL };
	char *name = attr(n, "name"), *type = attr(n, "type");
	char *cache = attr(n, "cache"), *io = attr(n, "io");
	char *queues = attr(n, "queues"), *event_idx = attr(n, "event_idx");
	uint64_t q;
	int ret = check_attrs(c, n, attrs);

	if (!ret && name && strcmp(name, "qemu"))
		ret = fail(c, n, "<driver name='%s'>: only 'qemu' (libvirt's "
			   "name for the raw host driver)", name);
	if (!ret && type && strcmp(type, "raw"))
		ret = fail(c, n, "<driver type='%s'>: gpin-vmm serves raw "
			   "images only", type);
	if (!ret && cache && strcmp(cache, "none") && strcmp(cache, "directsync"))
		ret = fail(c, n, "<driver cache='%s'>: gpin-vmm always does direct "
			   "I/O (cache='none')", cache);
	if (!ret && io) {
		if (!strcmp(io, "native"))
			disk->aio = DOMAIN_AIO_NATIVE;
		else if (!strcmp(io, "io_uring"))
			disk->aio = DOMAIN_AIO_IO_URING;
		else if (!strcmp(io, "threads"))
			disk->aio = DOMAIN_AIO_THREADS;
		else
			ret = fail(c, n, "<driver io='%s'> is not supported", io);
	}
	if (!ret && queues) {
		if (parse_u64(queues, &q) || q < 1 || q > DOMAIN_QUEUES_MAX)
			ret = fail(c, n, "<driver queues='%s'>: expected 1 to %d",
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
	return ret ?: no_children(c, n);
}

static int parse_source(struct parse_ctx *c, const xmlNode *n,
			struct domain_disk *disk)
{
	const char *key = disk->type == DOMAIN_DISK_FILE ? "file" : "dev";
	const char *const attrs[] = { key, NULL };
	char *path;

	if (check_attrs(c, n, attrs) || no_children(c, n))
		return -1;
	path = attr(n, key);
	if (!path || !*path) {
		xmlFree(path);
		return fail(c, n, "<disk><source> has no %s= path", key);
	}
	free(disk->path);
	disk->path = strdup(path);
	xmlFree(path);
	return disk->path ? 0 : fail(c, n, "out of memory");
}

static int parse_target(struct parse_ctx *c, const xmlNode *n,
			struct domain_disk *disk)
{
	static const char *const attrs[] = { "dev", "bus", NULL };
	char *dev = attr(n, "dev"), *bus = attr(n, "bus");
	int ret = check_attrs(c, n, attrs) ?: no_children(c, n);

	if (!ret && bus && strcmp(bus, "virtio"))
		ret = fail(c, n, "<target bus='%s'>: unsupported disk bus; "
			   "gpin-vmm has virtio only", bus);
	if (!ret && (!dev || !*dev))
		ret = fail(c, n, "<disk><target> needs dev=");
	if (!ret) {
		free(disk->target);
		disk->target = strdup(dev);
		if (!disk->target)
			ret = fail(c, n, "out of memory");
	}
	xmlFree(dev);
	xmlFree(bus);
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
	char *type = attr(n, "type");
	int ret = check_attrs(c, n, attrs) ?: no_children(c, n);

	if (!ret && type && !strcmp(type, "pci"))
		disk->bus = DOMAIN_BUS_PCI;
	else if (!ret && type && !strcmp(type, "virtio-mmio"))
		disk->bus = DOMAIN_BUS_VIRTIO_MMIO;
	else if (!ret)
		ret = fail(c, n, "<address type='%s'>: gpin-vmm's disks are "
			   "on 'pci' or 'virtio-mmio'", type ? type : "");
	xmlFree(type);
	return ret;
}

static int parse_disk(struct parse_ctx *c, const xmlNode *dn, struct domain *d)
{
	static const char *const attrs[] = { "type", "device", NULL };
	char *type = attr(dn, "type"), *device = attr(dn, "device");
	struct domain_disk *disk;
	const xmlNode *n;
	unsigned int i;
	int ret = check_attrs(c, dn, attrs);

	if (!ret && d->ndisks == DOMAIN_DISKS_MAX)
		ret = fail(c, dn, "more than %d disks", DOMAIN_DISKS_MAX);
	if (!ret && device && strcmp(device, "disk"))
		ret = fail(c, dn, "<disk device='%s'> is not supported by gpin-vmm "
			   "(only 'disk')", device);
	disk = &d->disks[d->ndisks];
	*disk = (struct domain_disk) { 0 };
	if (!ret && type && !strcmp(type, "file"))
		disk->type = DOMAIN_DISK_FILE;
	else if (!ret && type && !strcmp(type, "block"))
		disk->type = DOMAIN_DISK_BLOCK;
	else if (!ret)
		ret = fail(c, dn, "<disk type='%s'> is not supported by gpin-vmm "
			   "(only 'file' and 'block')", type ? type : "");
	xmlFree(type);
	xmlFree(device);
	if (ret)
		return -1;
	d->ndisks++;	/* from here domain__free() owns its strings */
	for_each_child(n, dn) {
		if (is(n, "driver"))
			ret = parse_driver(c, n, disk);
		else if (is(n, "source"))
			ret = parse_source(c, n, disk);
		else if (is(n, "target"))
			ret = parse_target(c, n, disk);
		else if (is(n, "address"))
			ret = parse_address(c, n, disk);
		else if (is(n, "readonly"))
			ret = check_flag(c, n);
		else
			ret = unsupported(c, n);
		if (ret)
			return -1;
		if (is(n, "readonly"))
			disk->readonly = true;
	}
	if (!disk->path)
		return fail(c, dn, "<disk> has no <source>: gpin-vmm needs the "
			    "backing file or device");
	if (!disk->target)
		return fail(c, dn, "<disk> has no <target dev=…>");
	for (i = 0; i + 1 < d->ndisks; i++)
		if (!strcmp(d->disks[i].target, disk->target))
			return fail(c, dn, "two disks with target '%s'",
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
	char *type = attr(cn, "type");
	enum domain_console kind = DOMAIN_CONSOLE_STDIO;
	const xmlNode *n;
	int ret = check_attrs(c, cn, attrs);

	if (!ret && type && !strcmp(type, "pty"))
		kind = DOMAIN_CONSOLE_PTY;
	else if (!ret && (!type || strcmp(type, "stdio")))
		ret = fail(c, cn, "<%s type='%s'> is not supported by gpin-vmm "
			   "(pty or stdio)", cn->name, type ? type : "");
	xmlFree(type);
	if (!ret && *seen && kind != d->console)
		ret = fail(c, cn, "<%s>: gpin-vmm has one UART; <serial> and "
			   "<console> must be of the same type", cn->name);
	for_each_child(n, cn) {
		char *ttype, *port;

		if (ret)
			break;
		if (!is(n, "target")) {
			ret = unsupported(c, n);
			break;
		}
		ret = check_attrs(c, n, target_attrs) ?: no_children(c, n);
		ttype = attr(n, "type");
		port = attr(n, "port");
		if (!ret && port && strcmp(port, "0"))
			ret = fail(c, n, "<%s><target port='%s'>: one UART, port 0",
				   cn->name, port);
		if (!ret && ttype && strcmp(ttype, "serial") &&
		    strcmp(ttype, "isa-serial") && strcmp(ttype, "virtio"))
			ret = fail(c, n, "<%s><target type='%s'> is not supported "
				   "by gpin-vmm", cn->name, ttype);
		xmlFree(ttype);
		xmlFree(port);
	}
	d->console = kind;
	*seen = true;
	return ret;
}

static int parse_devices(struct parse_ctx *c, const xmlNode *devs,
			 struct domain *d)
{
	bool serial = false, console = false, chardev = false;
	const xmlNode *n;
	int ret;

	if (check_attrs(c, devs, no_attrs))
		return -1;
	for_each_child(n, devs) {
		if (is(n, "emulator")) {
			ret = check_attrs(c, n, no_attrs) ?:
			      take_text(c, n, &d->emulator);
		} else if (is(n, "disk")) {
			ret = parse_disk(c, n, d);
		} else if (is(n, "serial") || is(n, "console")) {
			bool *once = is(n, "serial") ? &serial : &console;

			if (*once)
				return fail(c, n, "more than one <%s>: gpin-vmm "
					    "has one UART", n->name);
			*once = true;
			ret = parse_chardev(c, n, d, &chardev);
		} else {
			ret = unsupported(c, n);
		}
		if (ret)
			return -1;
	}
	return 0;
}

/* ---- gpin's own metadata ---- */

static int parse_gpin_disk(struct parse_ctx *c, const xmlNode *n,
			   struct domain *d, bool *service_set)
{
	static const char *const attrs[] = { "target", "pin", "service", NULL };
	char *target = attr(n, "target"), *pin = attr(n, "pin");
	char *service = attr(n, "service");
	struct domain_disk *disk = NULL;
	unsigned int i;
	int ret = check_attrs(c, n, attrs) ?: no_children(c, n);

	if (!ret && !target)
		ret = fail(c, n, "<gpin:disk> needs target=");
	for (i = 0; !ret && i < d->ndisks; i++)
		if (!strcmp(d->disks[i].target, target))
			disk = &d->disks[i];
	if (!ret && !disk)
		ret = fail(c, n, "<gpin:disk target='%s'>: no such disk", target);
	if (!ret && pin) {
		if (!strcmp(pin, "kernel"))
			disk->pin = DOMAIN_PIN_KERNEL;
		else if (!strcmp(pin, "fast"))
			disk->pin = DOMAIN_PIN_FAST;
		else if (!strcmp(pin, "locked"))
			disk->pin = DOMAIN_PIN_LOCKED;
		else
			ret = fail(c, n, "<gpin:disk pin='%s'>: expected fast, "
				   "locked or kernel", pin);
	}
	if (!ret && service) {
		if (!strcmp(service, "vcpu"))
			disk->service = DOMAIN_SERVICE_VCPU;
		else if (!strcmp(service, "iothread"))
			disk->service = DOMAIN_SERVICE_IOTHREAD;
		else
			ret = fail(c, n, "<gpin:disk service='%s'>: expected vcpu "
				   "or iothread", service);
		service_set[disk - d->disks] = true;
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

static int parse_metadata(struct parse_ctx *c, const xmlNode *md,
			  struct domain *d, bool *service_set)
{
	const xmlNode *top, *n;
	bool seen = false;

	for_each_child(top, md) {
		/* Other programs' metadata is theirs. */
		if (!in_gpin_ns(top))
			continue;
		if (!is(top, "vmm") || seen)
			return fail(c, top, "<metadata>: gpin's namespace holds one "
				    "<vmm> element, not <%s>", top->name);
		seen = true;
		if (check_attrs(c, top, no_attrs))
			return -1;
		for_each_child(n, top) {
			if (in_gpin_ns(n) && is(n, "test-exit-port")) {
				if (check_flag(c, n))
					return -1;
				d->test_exit_port = true;
				continue;
			}
			if (!in_gpin_ns(n) || !is(n, "disk"))
				return fail(c, n, "<gpin:vmm><%s> is not known to "
					    "gpin-vmm", n->name);
			if (parse_gpin_disk(c, n, d, service_set))
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
static int reconcile_disks(struct parse_ctx *c, const xmlNode *root,
			   struct domain *d, const bool *service_set)
{
	unsigned int i;

	for (i = 0; i < d->ndisks; i++) {
		struct domain_disk *disk = &d->disks[i];

		if (disk->aio == DOMAIN_AIO_IO_URING &&
		    disk->pin != DOMAIN_PIN_KERNEL)
			return fail(c, root, "disk '%s': <driver io='io_uring'> "
				    "pins in the host kernel; gpin:disk pin='%s' "
				    "needs io='native'", disk->target,
				    domain__pin_name(disk->pin));
		if (disk->aio == DOMAIN_AIO_THREADS) {
			if (service_set[i] &&
			    disk->service != DOMAIN_SERVICE_IOTHREAD)
				return fail(c, root, "disk '%s': <driver io='threads'> "
					    "and gpin:disk service='vcpu' disagree",
					    disk->target);
			disk->service = DOMAIN_SERVICE_IOTHREAD;
		}
	}
	return 0;
}

/* ---- the domain ---- */

static int parse_root(struct parse_ctx *c, const xmlNode *root,
		      struct domain *d)
{
	static const char *const attrs[] = { "type", NULL };
	static const char *const features[] = { "acpi", "apic", NULL };
	bool service_set[DOMAIN_DISKS_MAX] = { false };
	const xmlNode *n, *metadata = NULL;
	bool have_memory = false, have_current = false;
	uint64_t current = 0;
	char *type;
	int ret = 0;

	if (!is(root, "domain"))
		return fail(c, root, "<%s>: expected a <domain>", root->name);
	type = attr(root, "type");
	if (check_attrs(c, root, attrs))
		ret = -1;
	else if (!type || strcmp(type, "kvm"))
		ret = fail(c, root, "<domain type='%s'>: gpin-vmm runs 'kvm' "
			   "domains", type ? type : "");
	xmlFree(type);
	if (ret)
		return -1;

	for_each_child(n, root) {
		if (is(n, "name"))
			ret = check_attrs(c, n, no_attrs) ?: take_text(c, n, &d->name);
		else if (is(n, "uuid") || is(n, "title") || is(n, "description"))
			ret = check_attrs(c, n, no_attrs) ?: no_children(c, n);
		else if (is(n, "metadata"))
			metadata = n;	/* after the disks it refers to */
		else if (is(n, "memory")) {
			ret = parse_memory(c, n, &d->mem_bytes);
			have_memory = true;
		} else if (is(n, "currentMemory")) {
			ret = parse_memory(c, n, &current);
			have_current = true;
		} else if (is(n, "vcpu"))
			ret = parse_vcpu(c, n, &d->vcpus);
		else if (is(n, "os"))
			ret = parse_os(c, n, d);
		else if (is(n, "memoryBacking"))
			ret = parse_memory_backing(c, n, d);
		else if (is(n, "features"))
			ret = parse_children_flags(c, n, features);
		else if (is(n, "clock"))
			ret = parse_clock(c, n);
		else if (is(n, "on_poweroff"))
			ret = parse_action(c, n, &d->on_poweroff);
		else if (is(n, "on_reboot"))
			ret = parse_action(c, n, &d->on_reboot);
		else if (is(n, "on_crash"))
			ret = parse_action(c, n, &d->on_crash);
		else if (is(n, "devices"))
			ret = parse_devices(c, n, d);
		else
			ret = unsupported(c, n);
		if (ret)
			return -1;
	}
	if (!have_memory)
		return fail(c, root, "<memory> is required");
	if (have_current && current != d->mem_bytes)
		return fail(c, root, "<currentMemory> differs from <memory>: "
			    "gpin-vmm has no balloon");
	if (!d->kernel)
		return fail(c, root, "<os><kernel> is required");
	if (metadata && parse_metadata(c, metadata, d, service_set))
		return -1;
	return reconcile_disks(c, root, d, service_set);
}

/* ---- libxml2 ---- */

/* libxml2 reports through a callback; keep the first error, one line. */
static void xml_error(void *opaque, xmlErrorPtr e)
{
	struct parse_ctx *c = opaque;
	char msg[512], *p;
	long line;
	size_t len;

	if (c->failed || !e)
		return;
	snprintf(msg, sizeof(msg), "%s", e->message ? e->message : "error");
	len = strlen(msg);
	while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
		msg[--len] = '\0';
	/* One line: libxml2 quotes the offending text, newlines and all. */
	for (p = msg; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	c->failed = true;
	line = e->line;
	/* The validator names the node rather than the line. */
	if (line <= 0 && e->node)
		line = xmlGetLineNo(e->node);
	if (line > 0)
		snprintf(c->err, c->errlen, "%s:%ld: %s", c->name, line, msg);
	else
		snprintf(c->err, c->errlen, "%s: %s", c->name, msg);
}

static int validate(struct parse_ctx *c, xmlDoc *doc, const char *schema)
{
	xmlRelaxNGParserCtxtPtr pctx;
	xmlRelaxNGValidCtxtPtr vctx;
	xmlRelaxNGPtr rng = NULL;
	char prefix[512];
	int ret;

	if (access(schema, R_OK))
		return fail(c, NULL, "cannot read libvirt's domain schema %s: %s "
			    "(Debian: install libvirt0; or set %s)", schema,
			    strerror(errno), DOMAIN_SCHEMA_ENV);
	pctx = xmlRelaxNGNewParserCtxt(schema);
	if (pctx) {
		struct parse_ctx sc = { .name = schema, .err = c->err,
					.errlen = c->errlen };

		xmlRelaxNGSetParserStructuredErrors(pctx, xml_error, &sc);
		rng = xmlRelaxNGParse(pctx);
		xmlRelaxNGFreeParserCtxt(pctx);
		if (!rng) {
			if (!sc.failed)
				fail(c, NULL, "cannot load schema %s", schema);
			c->failed = true;
			return -1;
		}
	}
	if (!rng)
		return fail(c, NULL, "out of memory");
	vctx = xmlRelaxNGNewValidCtxt(rng);
	if (!vctx) {
		xmlRelaxNGFree(rng);
		return fail(c, NULL, "out of memory");
	}
	xmlRelaxNGSetValidStructuredErrors(vctx, xml_error, c);
	ret = xmlRelaxNGValidateDoc(vctx, doc);
	xmlRelaxNGFreeValidCtxt(vctx);
	xmlRelaxNGFree(rng);
	if (ret == 0)
		return 0;
	/* Say which check failed in front of libxml2's message. */
	if (!c->failed)
		fail(c, NULL, "invalid");
	snprintf(prefix, sizeof(prefix), "%s", c->err);
	snprintf(c->err, c->errlen, "does not validate against libvirt's "
		 "schema: %s", prefix);
	return -1;
}

int domain__parse(struct domain *d, const char *xml, size_t len,
		  const char *name, const char *schema, char *err,
		  size_t errlen)
{
	struct parse_ctx c = { .name = name ? name : "domain", .err = err,
			       .errlen = errlen };
	xmlParserCtxtPtr pctx;
	xmlDoc *doc = NULL;
	int ret = -1;

	*d = (struct domain) { .vcpus = 1 };
	if (len > DOMAIN_XML_MAX || len > INT32_MAX)
		return fail(&c, NULL, "larger than %u bytes", DOMAIN_XML_MAX);
	pctx = xmlNewParserCtxt();
	if (!pctx)
		return fail(&c, NULL, "out of memory");
	/* No network, no entity expansion, no DTD loading: data only. */
	xmlSetStructuredErrorFunc(&c, xml_error);
	doc = xmlCtxtReadMemory(pctx, xml, (int)len, c.name, NULL,
				XML_PARSE_NONET | XML_PARSE_NOWARNING |
				XML_PARSE_NOERROR);
	if (!doc) {
		const xmlError *e = xmlCtxtGetLastError(pctx);

		if (!c.failed)
			xml_error(&c, (xmlErrorPtr)e);
		if (!c.failed)
			fail(&c, NULL, "not well-formed XML");
		goto out;
	}
	if (schema && validate(&c, doc, schema))
		goto out;
	ret = parse_root(&c, xmlDocGetRootElement(doc), d);
out:
	xmlSetStructuredErrorFunc(NULL, NULL);
	if (doc)
		xmlFreeDoc(doc);
	xmlFreeParserCtxt(pctx);
	if (ret)
		domain__free(d);
	return ret;
}

const char *domain__schema_path(void)
{
	const char *env = getenv(DOMAIN_SCHEMA_ENV);

	return env && *env ? env : DOMAIN_SCHEMA_DEFAULT;
}

int domain__load(struct domain *d, const char *path, const char *schema,
		 char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	ssize_t n;
	int fd, ret;

	*d = (struct domain) { .vcpus = 1 };
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	buf = malloc(DOMAIN_XML_MAX + 1);
	if (!buf) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	while ((n = read(fd, buf + len, DOMAIN_XML_MAX + 1 - len)) > 0)
		len += n;
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(buf);
		return -1;
	}
	ret = domain__parse(d, buf, len, path, schema, err, errlen);
	free(buf);
	return ret;
}

int domain__check_host(const struct domain *d, char *err, size_t errlen)
{
	unsigned int i;
	struct stat st;

	for (i = 0; i < d->ndisks; i++) {
		const struct domain_disk *disk = &d->disks[i];
		bool block = disk->type == DOMAIN_DISK_BLOCK;

		if (stat(disk->path, &st)) {
			snprintf(err, errlen, "disk '%s': %s: %s", disk->target,
				 disk->path, strerror(errno));
			return -1;
		}
		if (block ? !S_ISBLK(st.st_mode) : !S_ISREG(st.st_mode)) {
			snprintf(err, errlen, "disk '%s': %s is not a %s "
				 "(<disk type='%s'>)", disk->target, disk->path,
				 block ? "block device" : "regular file",
				 block ? "block" : "file");
			return -1;
		}
	}
	return 0;
}

void domain__free(struct domain *d)
{
	unsigned int i;

	for (i = 0; i < d->ndisks; i++) {
		free(d->disks[i].path);
		free(d->disks[i].target);
	}
	free(d->name);
	free(d->kernel);
	free(d->initrd);
	free(d->cmdline);
	free(d->emulator);
	*d = (struct domain) { .vcpus = 1 };
}

const char *domain__aio_name(enum domain_disk_aio aio)
{
	switch (aio) {
	case DOMAIN_AIO_NATIVE:
		return "native";
	case DOMAIN_AIO_IO_URING:
		return "io_uring";
	case DOMAIN_AIO_THREADS:
		return "threads";
	case DOMAIN_AIO_DEFAULT:
		break;
	}
	return "default";
}

const char *domain__pin_name(enum domain_disk_pin pin)
{
	switch (pin) {
	case DOMAIN_PIN_FAST:
		return "fast";
	case DOMAIN_PIN_LOCKED:
		return "locked";
	case DOMAIN_PIN_KERNEL:
		break;
	}
	return "kernel";
}

const char *domain__service_name(enum domain_disk_service s)
{
	return s == DOMAIN_SERVICE_IOTHREAD ? "iothread" : "vcpu";
}
