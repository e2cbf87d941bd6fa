/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A 16550A UART: what Linux's 8250 driver needs to print and read through
 * ttyS0 with interrupts (the tty layer transmits on THRE interrupts, so a
 * UART without them shows kernel messages but no userspace output).
 */
#ifndef GPIN_SERIAL_H
#define GPIN_SERIAL_H

#include <stddef.h>
#include <stdint.h>

#include "bus.h"

/* Register offsets (DLAB = 0 unless noted). */
#define UART_RBR	0	/* read: receive buffer */
#define UART_THR	0	/* write: transmit holding */
#define UART_IER	1
#define UART_IIR	2	/* read */
#define UART_FCR	2	/* write */
#define UART_LCR	3
#define UART_MCR	4
#define UART_LSR	5
#define UART_MSR	6
#define UART_SCR	7
#define UART_NR_REGS	8

#define UART_IER_RDI	0x01
#define UART_IER_THRI	0x02
#define UART_IER_RLSI	0x04
#define UART_IER_MSI	0x08

#define UART_IIR_NO_INT	0x01
#define UART_IIR_THRI	0x02
#define UART_IIR_RDI	0x04
#define UART_IIR_RLSI	0x06
#define UART_IIR_FIFO	0xc0	/* FIFOs enabled, as a 16550A shows */

#define UART_FCR_ENABLE	0x01
#define UART_FCR_CLR_RX	0x02

#define UART_LCR_DLAB	0x80

#define UART_MCR_DTR	0x01
#define UART_MCR_RTS	0x02
#define UART_MCR_OUT1	0x04
#define UART_MCR_OUT2	0x08
#define UART_MCR_LOOP	0x10

#define UART_LSR_DR	0x01
#define UART_LSR_OE	0x02
#define UART_LSR_THRE	0x20
#define UART_LSR_TEMT	0x40

#define UART_MSR_CTS	0x10
#define UART_MSR_DSR	0x20
#define UART_MSR_RI	0x40
#define UART_MSR_DCD	0x80

#define SERIAL_RX_BUF	4096

struct serial;

struct serial_backend {
	/* Transmit one byte (the terminal, a PTY, a log file). */
	void (*tx)(void *opaque, uint8_t byte);
	void *tx_opaque;
	/* Drive the UART's interrupt line. */
	void (*set_irq)(void *opaque, int level);
	void *irq_opaque;
};

struct serial *serial__create(const struct serial_backend *backend);
void serial__destroy(struct serial *s);
int serial__attach(struct serial *s, struct bus *pio, uint64_t base);

/*
 * Queues received bytes for the guest; returns how many fit (the rest is
 * for the caller to offer again once the guest has read some).
 */
size_t serial__receive(struct serial *s, const uint8_t *buf, size_t len);

/* Room left in the receive buffer. */
size_t serial__rx_room(struct serial *s);

extern const struct bus_dev_ops serial__ops;

#endif /* GPIN_SERIAL_H */
