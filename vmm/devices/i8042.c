// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "arch/x86/layout.h"
#include "i8042.h"

#define I8042_CMD_PULSE_RESET	0xfe

/*
 * Status 0: output buffer empty and input buffer ready, so a guest waiting
 * to send a command never spins; there is never a byte to read.
 */
static void i8042_read(void *opaque, uint64_t offset, void *data,
		       unsigned int len)
{
	memset(data, 0, len);
}

static void i8042_cmd_write(void *opaque, uint64_t offset, const void *data,
			    unsigned int len)
{
	struct i8042 *kbd = opaque;

	if (*(const uint8_t *)data == I8042_CMD_PULSE_RESET && kbd->reset)
		kbd->reset(kbd->opaque);
}

static const struct bus_dev_ops i8042_data_ops = {
	.read = i8042_read,
};

static const struct bus_dev_ops i8042_cmd_ops = {
	.read = i8042_read,
	.write = i8042_cmd_write,
};

int i8042__attach(struct i8042 *kbd, struct bus *pio)
{
	int ret;

	ret = bus__register(pio, PORT_I8042_DATA, 1, &i8042_data_ops, kbd);
	if (ret)
		return ret;
	return bus__register(pio, PORT_I8042_CMD, 1, &i8042_cmd_ops, kbd);
}
