/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gpin-vmm as libvirt's ch driver expects Cloud Hypervisor to be: an
 * HTTP API on a UNIX socket (--api-socket fd=N|path=P), a VM that exists
 * only once vm.create has described it, and a --version line the driver
 * parses.
 */
#ifndef GPIN_API_API_H
#define GPIN_API_API_H

#include <stdio.h>

#include "options.h"

/*
 * --version.  Invoked as "cloud-hypervisor" (the name libvirt's ch driver
 * looks for on PATH), the first line is the one the driver parses,
 * "cloud-hypervisor vMAJOR.MINOR.MICRO", naming the API release gpin-vmm
 * follows; under any other name it is "gpin-vmm VERSION" as always.
 */
void api__print_version(FILE *out, const char *argv0);

/*
 * Serves the API until vmm.shutdown or a signal on @sfd (the signalfd
 * main.c made) other than SIGUSR1, which prints the disks' counters;
 * runs the VM that vm.create / vm.boot describe, with the command line's
 * test hooks (--test-exit-port, --churn) and @host's defaults for what
 * vm.create cannot say (pin, service, transport).  Returns the VMM's exit
 * status.
 */
struct host_defaults;

int api__serve(const struct vm_options *opts,
	       const struct host_defaults *host, int sfd);

#endif /* GPIN_API_API_H */
