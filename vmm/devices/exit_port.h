/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef GPIN_EXIT_PORT_H
#define GPIN_EXIT_PORT_H

#include <stdint.h>

#include "bus.h"

/*
 * The test exit device: a guest writes one byte to PORT_EXIT and the VMM
 * ends with that byte as its exit status, so a test running inside the
 * guest can report pass or fail to whoever started the VMM.
 */
struct exit_port {
	void (*exit)(void *opaque, uint8_t code);
	void *opaque;
};

int exit_port__attach(struct exit_port *ep, struct bus *pio);

#endif /* GPIN_EXIT_PORT_H */
