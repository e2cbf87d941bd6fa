/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A parsed domain (config/domain.h) as the VM gpin-vmm runs, a struct
 * vm_config, and --print-config.
 */
#ifndef GPIN_CONFIG_APPLY_H
#define GPIN_CONFIG_APPLY_H

#include <stdio.h>

#include "config/domain.h"
#include "vm_config.h"

/*
 * Fills @cfg from @d, field by field (no text in between): what the
 * domain says replaces what the command line said about the VM; the
 * test hooks (--test-exit-port, --churn) stay.  0, or -1 with a reason in
 * @err.
 */
int config__apply_domain(const struct domain *d, struct vm_config *cfg,
			 char *err, size_t errlen);

struct host_defaults;

/*
 * The settings the VMM will run with, one "key: value" a line, each
 * disk's with where its pin, service and transport came from: the route
 * (the domain when @d is not NULL, else the command line), @host (the
 * host defaults file, with its line) or gpin-vmm's default.
 */
void config__print(FILE *out, const struct vm_config *cfg,
		   const struct host_defaults *host, const struct domain *d);

#endif /* GPIN_CONFIG_APPLY_H */
