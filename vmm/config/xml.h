/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The XML side of config/domain*.c: one parse's context (the first error
 * is the one reported, with its line), the checks every element goes
 * through (only the attributes and children gpin-vmm knows), text and
 * number helpers, and libxml2's parse and RelaxNG validation.
 */
#ifndef GPIN_CONFIG_XML_H
#define GPIN_CONFIG_XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libxml/tree.h>

struct parse_ctx {
	const char *name;	/* the document, for messages */
	char *err;
	size_t errlen;
	bool failed;		/* the first error is the one reported */
};

/* Attributes allowed: none. */
static const char *const xml_no_attrs[] = { NULL };

#define for_each_child(child, parent) \
	for (child = xml_next_element((parent)->children); child; \
	     child = xml_next_element(child->next))

/* "NAME:LINE: " and the reason, the first time; returns -1. */
int xml_fail(struct parse_ctx *c, const xmlNode *node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "<parent><n> is not supported by gpin-vmm"; returns -1. */
int xml_unsupported(struct parse_ctx *c, const xmlNode *n);
bool xml_is(const xmlNode *n, const char *name);
const xmlNode *xml_next_element(const xmlNode *n);
bool xml_in_list(const char *s, const char *const *list);
/* Every attribute of @n must be in @allowed (NULL-terminated). */
int xml_check_attrs(struct parse_ctx *c, const xmlNode *n,
		    const char *const *allowed);
int xml_no_children(struct parse_ctx *c, const xmlNode *n);
/* An element that must be empty and plain, such as <readonly/>. */
int xml_check_flag(struct parse_ctx *c, const xmlNode *n);
/* Attribute value or NULL; the string is libxml2's, to xmlFree(). */
char *xml_attr(const xmlNode *n, const char *name);
/* Replaces *@dst with the trimmed text of @n (malloc'd); 0 or -1. */
int xml_take_text(struct parse_ctx *c, const xmlNode *n, char **dst);
/* A decimal u64, the whole string; 0 or -1. */
int xml_parse_u64(const char *s, uint64_t *v);

/* libxml2's error callback: the first error, one line, into @opaque's ctx. */
void xml_report(void *opaque, xmlErrorPtr e);
/* Validates @doc against the RelaxNG schema at @schema; 0 or -1. */
int xml_validate(struct parse_ctx *c, xmlDoc *doc, const char *schema);

#endif /* GPIN_CONFIG_XML_H */
