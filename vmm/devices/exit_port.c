// SPDX-License-Identifier: GPL-2.0-only
#include "arch/x86/layout.h"
#include "exit_port.h"

static void exit_port_write(void *opaque, uint64_t offset, const void *data,
			    unsigned int len)
{
	struct exit_port *ep = opaque;

	/* Wider writes are accepted; the low byte is the code (x86 is LE). */
	ep->exit(ep->opaque, *(const uint8_t *)data);
}

static const struct bus_dev_ops exit_port_ops = {
	.write = exit_port_write,
};

int exit_port__attach(struct exit_port *ep, struct bus *pio)
{
	return bus__register(pio, PORT_EXIT, 1, &exit_port_ops, ep);
}
