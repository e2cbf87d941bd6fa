/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A parsed domain (config/domain.h) as gpin-vmm's struct vm_options, and
 * --print-config.  Disks go through options__parse_disk(), so a domain
 * accepts exactly the disk settings --disk accepts.
 */
#ifndef GPIN_CONFIG_APPLY_H
#define GPIN_CONFIG_APPLY_H

#include <stdio.h>

#include "config/domain.h"
#include "options.h"

/*
 * Fills @opts from @d; @opts points into @d's strings, so @d must outlive
 * it.  Command-line settings other than the VM's (--print-config,
 * --api-socket) are kept.  0, or -1 with a reason in @err.
 */
int config__apply_domain(const struct domain *d, struct vm_options *opts,
			 char *err, size_t errlen);

/* The settings the VMM will run with, one "key: value" a line. */
void config__print(FILE *out, const struct vm_options *opts,
		   const struct domain *d);

#endif /* GPIN_CONFIG_APPLY_H */
