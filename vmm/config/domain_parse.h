/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The parts of a domain's walk that live in config/domain_devices.c, for
 * config/domain.c's parse_root().
 */
#ifndef GPIN_CONFIG_DOMAIN_PARSE_H
#define GPIN_CONFIG_DOMAIN_PARSE_H

#include "config/domain.h"
#include "config/xml.h"

int domain_parse_devices(struct parse_ctx *c, const xmlNode *devs,
			 struct domain *d);
/* After the devices: gpin's <metadata> names their targets. */
int domain_parse_metadata(struct parse_ctx *c, const xmlNode *md,
			  struct domain *d);
/* <driver io=...> against the metadata. */
int domain_reconcile_disks(struct parse_ctx *c, const xmlNode *root,
			   struct domain *d);

#endif /* GPIN_CONFIG_DOMAIN_PARSE_H */
