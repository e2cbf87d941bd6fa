// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/relaxng.h>

#include "config/domain.h"
#include "config/xml.h"
#include "log.h"

int xml_fail(struct parse_ctx *c, const xmlNode *node, const char *fmt, ...)
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
	err__vset(c->err + n, c->errlen - n, fmt, ap);
	va_end(ap);
	return -1;
}

bool xml_is(const xmlNode *n, const char *name)
{
	return !strcmp((const char *)n->name, name);
}

const xmlNode *xml_next_element(const xmlNode *n)
{
	while (n && n->type != XML_ELEMENT_NODE)
		n = n->next;
	return n;
}

static const char *xml_parent_name(const xmlNode *n)
{
	return n->parent && n->parent->type == XML_ELEMENT_NODE ?
		(const char *)n->parent->name : "";
}

int xml_unsupported(struct parse_ctx *c, const xmlNode *n)
{
	return xml_fail(c, n, "<%s><%s> is not supported by gpin-vmm",
			xml_parent_name(n), n->name);
}

bool xml_in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

/* Every attribute of @n must be in @allowed (NULL-terminated). */
int xml_check_attrs(struct parse_ctx *c, const xmlNode *n,
		    const char *const *allowed)
{
	const xmlAttr *a;

	for (a = n->properties; a; a = a->next)
		if (!xml_in_list((const char *)a->name, allowed))
			return xml_fail(c, n, "<%s %s=…> is not supported by gpin-vmm",
					n->name, a->name);
	return 0;
}

int xml_no_children(struct parse_ctx *c, const xmlNode *n)
{
	const xmlNode *child;

	for_each_child(child, n)
		return xml_unsupported(c, child);
	return 0;
}

/* An element that must be empty and plain, such as <readonly/>. */
int xml_check_flag(struct parse_ctx *c, const xmlNode *n)
{
	return xml_no_children(c, n) ?: xml_check_attrs(c, n, xml_no_attrs);
}

/* Attribute value or NULL; the string is libxml2's, to xmlFree(). */
char *xml_attr(const xmlNode *n, const char *name)
{
	return (char *)xmlGetProp(n, (const xmlChar *)name);
}

/* Text content with surrounding white space removed; malloc'd. */
static char *xml_text(const xmlNode *n)
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
int xml_take_text(struct parse_ctx *c, const xmlNode *n, char **dst)
{
	if (xml_no_children(c, n))
		return -1;
	free(*dst);
	*dst = xml_text(n);
	return *dst ? 0 : xml_fail(c, n, "out of memory");
}

int xml_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

/* libxml2 reports through a callback; keep the first error, one line. */
void xml_report(void *opaque, xmlErrorPtr e)
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

int xml_validate(struct parse_ctx *c, xmlDoc *doc, const char *schema)
{
	xmlRelaxNGParserCtxtPtr pctx;
	xmlRelaxNGValidCtxtPtr vctx;
	xmlRelaxNGPtr rng = NULL;
	char prefix[512];
	int ret;

	if (access(schema, R_OK))
		return xml_fail(c, NULL, "cannot read libvirt's domain schema %s: %s "
				"(Debian: install libvirt0; or set %s)", schema,
				strerror(errno), DOMAIN_SCHEMA_ENV);
	pctx = xmlRelaxNGNewParserCtxt(schema);
	if (pctx) {
		struct parse_ctx sc = { .name = schema, .err = c->err,
					.errlen = c->errlen };

		xmlRelaxNGSetParserStructuredErrors(pctx, xml_report, &sc);
		rng = xmlRelaxNGParse(pctx);
		xmlRelaxNGFreeParserCtxt(pctx);
		if (!rng) {
			if (!sc.failed)
				xml_fail(c, NULL, "cannot load schema %s", schema);
			c->failed = true;
			return -1;
		}
	}
	if (!rng)
		return xml_fail(c, NULL, "out of memory");
	vctx = xmlRelaxNGNewValidCtxt(rng);
	if (!vctx) {
		xmlRelaxNGFree(rng);
		return xml_fail(c, NULL, "out of memory");
	}
	xmlRelaxNGSetValidStructuredErrors(vctx, xml_report, c);
	ret = xmlRelaxNGValidateDoc(vctx, doc);
	xmlRelaxNGFreeValidCtxt(vctx);
	xmlRelaxNGFree(rng);
	if (ret == 0)
		return 0;
	/* Say which check failed in front of libxml2's message. */
	if (!c->failed)
		xml_fail(c, NULL, "invalid");
	snprintf(prefix, sizeof(prefix), "%s", c->err);
	snprintf(c->err, c->errlen, "does not validate against libvirt's "
		 "schema: %s", prefix);
	return -1;
}
