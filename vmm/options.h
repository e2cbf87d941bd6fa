/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Command-line options of gpin-vmm, parsed into a plain struct so the
 * parser can be tested without a VM.
 */
#ifndef GPIN_OPTIONS_H
#define GPIN_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define VM_CPUS_MAX		64
#define DEFAULT_CMDLINE		"console=ttyS0"
#define DEFAULT_MEM		(256ULL << 20)

struct vm_options {
	const char *kernel;
	const char *initrd;
	const char *cmdline;
	unsigned int ncpus;
	uint64_t mem_size;
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

void options__usage(FILE *out, const char *prog);

#endif /* GPIN_OPTIONS_H */
