/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Command-line options of gpin-vmm, parsed into a plain struct so the
 * parser can be tested without a VM.
 */
#ifndef GPIN_OPTIONS_H
#define GPIN_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

#include "log.h"
#include "vm_config.h"

/* The command line: the VM it describes, and what the VMM does with it. */
struct vm_options {
	struct vm_config vm;
	const char *domain;	/* --domain: the VM is a libvirt domain XML */
	bool print_config;	/* --print-config: print the settings, exit */
	int api_fd;		/* --api-socket fd=N (listening), or -1 */
	const char *api_path;	/* --api-socket path=P, or NULL */
	enum log_level log_level;	/* --quiet, --verbose */
	bool help;
	bool version;
};

/*
 * Parses argv into @opts.  Returns 0, or -1 with a one-line reason in
 * @err (the caller prints it and exits with status 2).
 */
int options__parse(struct vm_options *opts, int argc, char **argv,
		   char *err, size_t errlen);

/* "512M", "2G", "1048576K", "300" (MiB); 0 on success, -1 on bad input. */
int options__parse_size(const char *s, uint64_t *bytes);

/*
 * One --disk value, "path[,ro][,pin=fast|locked|registered|kernel]
 * [,queues=N][,service=vcpu|iothread][,event_idx=on|off]
 * [,transport=mmio|pci]"; 0, or -1 with a reason in @err.
 */
int options__parse_disk(const char *s, struct disk_config *d, char *err,
			size_t errlen);

void options__usage(FILE *out, const char *prog);

#endif /* GPIN_OPTIONS_H */
