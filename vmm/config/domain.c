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
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>

#include "arch/x86/layout.h"
#include "config/domain.h"
#include "config/domain_parse.h"
#include "config/xml.h"
#include "log.h"
#include "vm_config.h"

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
	char *unit = xml_attr(n, "unit"), *val = NULL;
	uint64_t v, scale;
	int ret = -1;

	if (xml_check_attrs(c, n, attrs) || xml_take_text(c, n, &val))
		goto out;
	if (unit_scale(unit, &scale)) {
		xml_fail(c, n, "<%s unit='%s'>: unknown unit", n->name, unit);
		goto out;
	}
	if (xml_parse_u64(val, &v)) {
		xml_fail(c, n, "<%s>%s</%s>: expected a non-negative integer",
			 n->name, val, n->name);
		goto out;
	}
	if (__builtin_mul_overflow(v, scale, bytes)) {
		xml_fail(c, n, "<%s>%s %s</%s>: too large", n->name, val,
			 unit ? unit : "KiB", n->name);
		goto out;
	}
	if (*bytes < GUEST_MEM_MIN || *bytes > GUEST_MEM_MAX) {
		xml_fail(c, n, "<%s>: %llu bytes; gpin-vmm takes %llu MiB to %llu GiB",
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
	char *placement = xml_attr(n, "placement"), *current = xml_attr(n, "current");
	char *val = NULL;
	uint64_t v, cur;
	int ret = -1;

	if (xml_check_attrs(c, n, attrs) || xml_take_text(c, n, &val))
		goto out;
	if (placement && strcmp(placement, "static")) {
		xml_fail(c, n, "<vcpu placement='%s'> is not supported by gpin-vmm "
			 "(only 'static')", placement);
		goto out;
	}
	if (xml_parse_u64(val, &v) || v < 1 || v > VM_CPUS_MAX) {
		xml_fail(c, n, "<vcpu>%s</vcpu>: expected 1 to %d", val, VM_CPUS_MAX);
		goto out;
	}
	if (current && (xml_parse_u64(current, &cur) || cur != v)) {
		xml_fail(c, n, "<vcpu current='%s'>: gpin-vmm has no vCPU hotplug; "
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
	char *arch = xml_attr(n, "arch"), *val = NULL;
	int ret = -1;

	if (xml_check_attrs(c, n, attrs) || xml_take_text(c, n, &val))
		goto out;
	if (arch && strcmp(arch, "x86_64")) {
		xml_fail(c, n, "<type arch='%s'>: gpin-vmm runs x86_64 guests", arch);
		goto out;
	}
	if (strcmp(val, "hvm")) {
		xml_fail(c, n, "<os><type>%s</type>: only hvm", val);
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

	if (xml_check_attrs(c, os, xml_no_attrs))
		return -1;
	for_each_child(n, os) {
		int ret;

		if (xml_is(n, "type"))
			ret = parse_os_type(c, n);
		else if (xml_is(n, "kernel"))
			ret = xml_check_attrs(c, n, xml_no_attrs) ?:
			      xml_take_text(c, n, &d->kernel);
		else if (xml_is(n, "initrd"))
			ret = xml_check_attrs(c, n, xml_no_attrs) ?:
			      xml_take_text(c, n, &d->initrd);
		else if (xml_is(n, "cmdline"))
			ret = xml_check_attrs(c, n, xml_no_attrs) ?:
			      xml_take_text(c, n, &d->cmdline);
		else
			ret = xml_unsupported(c, n);
		if (ret)
			return -1;
	}
	if (!d->kernel || !*d->kernel)
		return xml_fail(c, os, "<os><kernel> is required: gpin-vmm boots a "
				"Linux bzImage directly (no firmware, no boot device)");
	if (d->initrd && !*d->initrd)
		return xml_fail(c, os, "<os><initrd> is empty");
	if (d->cmdline && strlen(d->cmdline) >= CMDLINE_MAX)
		return xml_fail(c, os, "<os><cmdline> is longer than %d bytes",
				CMDLINE_MAX - 1);
	return 0;
}

static int parse_action(struct parse_ctx *c, const xmlNode *n,
			enum domain_action *action)
{
	char *val = NULL;
	int ret;

	ret = xml_check_attrs(c, n, xml_no_attrs) ?: xml_take_text(c, n, &val);
	if (!ret && strcmp(val, "destroy"))
		ret = xml_fail(c, n, "<%s>%s</%s> is not supported by gpin-vmm: the "
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

	if (xml_check_attrs(c, parent, xml_no_attrs))
		return -1;
	for_each_child(n, parent)
		if (!xml_in_list((const char *)n->name, allowed) ||
		    xml_check_flag(c, n))
			return c->failed ? -1 : xml_unsupported(c, n);
	return 0;
}

static int parse_memory_backing(struct parse_ctx *c, const xmlNode *mb,
				struct domain *d)
{
	static const char *const allowed[] = { "locked", NULL };

	if (parse_children_flags(c, mb, allowed))
		return -1;
	d->mem_locked = mb->children && xml_next_element(mb->children);
	return 0;
}

static int parse_clock(struct parse_ctx *c, const xmlNode *n)
{
	static const char *const attrs[] = { "offset", NULL };
	char *offset = xml_attr(n, "offset");
	int ret = xml_check_attrs(c, n, attrs);

	if (!ret && offset && strcmp(offset, "utc"))
		ret = xml_fail(c, n, "<clock offset='%s'>: gpin-vmm's RTC is the "
			       "host's UTC", offset);
	xmlFree(offset);
	return ret ?: xml_no_children(c, n);
}

/* ---- the domain ---- */

static int parse_root(struct parse_ctx *c, const xmlNode *root,
		      struct domain *d)
{
	static const char *const attrs[] = { "type", NULL };
	static const char *const features[] = { "acpi", "apic", NULL };
	const xmlNode *n, *metadata = NULL;
	bool have_memory = false, have_current = false;
	uint64_t current = 0;
	char *type;
	int ret = 0;

	if (!xml_is(root, "domain"))
		return xml_fail(c, root, "<%s>: expected a <domain>", root->name);
	type = xml_attr(root, "type");
	if (xml_check_attrs(c, root, attrs))
		ret = -1;
	else if (!type || strcmp(type, "kvm"))
		ret = xml_fail(c, root, "<domain type='%s'>: gpin-vmm runs 'kvm' "
			       "domains", type ? type : "");
	xmlFree(type);
	if (ret)
		return -1;

	for_each_child(n, root) {
		if (xml_is(n, "name"))
			ret = xml_check_attrs(c, n, xml_no_attrs) ?: xml_take_text(c, n, &d->name);
		else if (xml_is(n, "uuid") || xml_is(n, "title") || xml_is(n, "description"))
			ret = xml_check_attrs(c, n, xml_no_attrs) ?: xml_no_children(c, n);
		else if (xml_is(n, "metadata"))
			metadata = n;	/* after the disks it refers to */
		else if (xml_is(n, "memory")) {
			ret = parse_memory(c, n, &d->mem_bytes);
			have_memory = true;
		} else if (xml_is(n, "currentMemory")) {
			ret = parse_memory(c, n, &current);
			have_current = true;
		} else if (xml_is(n, "vcpu"))
			ret = parse_vcpu(c, n, &d->vcpus);
		else if (xml_is(n, "os"))
			ret = parse_os(c, n, d);
		else if (xml_is(n, "memoryBacking"))
			ret = parse_memory_backing(c, n, d);
		else if (xml_is(n, "features"))
			ret = parse_children_flags(c, n, features);
		else if (xml_is(n, "clock"))
			ret = parse_clock(c, n);
		else if (xml_is(n, "on_poweroff"))
			ret = parse_action(c, n, &d->on_poweroff);
		else if (xml_is(n, "on_reboot"))
			ret = parse_action(c, n, &d->on_reboot);
		else if (xml_is(n, "on_crash"))
			ret = parse_action(c, n, &d->on_crash);
		else if (xml_is(n, "devices"))
			ret = domain_parse_devices(c, n, d);
		else
			ret = xml_unsupported(c, n);
		if (ret)
			return -1;
	}
	if (!have_memory)
		return xml_fail(c, root, "<memory> is required");
	if (have_current && current != d->mem_bytes)
		return xml_fail(c, root, "<currentMemory> differs from <memory>: "
				"gpin-vmm has no balloon");
	if (!d->kernel)
		return xml_fail(c, root, "<os><kernel> is required");
	if (metadata && domain_parse_metadata(c, metadata, d))
		return -1;
	return domain_reconcile_disks(c, root, d);
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
		return xml_fail(&c, NULL, "larger than %u bytes", DOMAIN_XML_MAX);
	pctx = xmlNewParserCtxt();
	if (!pctx)
		return xml_fail(&c, NULL, "out of memory");
	/* No network, no entity expansion, no DTD loading: data only. */
	xmlSetStructuredErrorFunc(&c, xml_report);
	doc = xmlCtxtReadMemory(pctx, xml, (int)len, c.name, NULL,
				XML_PARSE_NONET | XML_PARSE_NOWARNING |
				XML_PARSE_NOERROR);
	if (!doc) {
		const xmlError *e = xmlCtxtGetLastError(pctx);

		if (!c.failed)
			xml_report(&c, (xmlErrorPtr)e);
		if (!c.failed)
			xml_fail(&c, NULL, "not well-formed XML");
		goto out;
	}
	if (schema && xml_validate(&c, doc, schema))
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
		err__set(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	buf = malloc(DOMAIN_XML_MAX + 1);
	if (!buf) {
		close(fd);
		err__set(err, errlen, "%s: out of memory", path);
		return -1;
	}
	while ((n = read(fd, buf + len, DOMAIN_XML_MAX + 1 - len)) > 0)
		len += n;
	close(fd);
	if (n < 0) {
		err__set(err, errlen, "%s: %s", path, strerror(errno));
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
			err__set(err, errlen, "disk '%s': %s: %s", disk->target,
				 disk->path, strerror(errno));
			return -1;
		}
		if (block ? !S_ISBLK(st.st_mode) : !S_ISREG(st.st_mode)) {
			err__set(err, errlen, "disk '%s': %s is not a %s "
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
