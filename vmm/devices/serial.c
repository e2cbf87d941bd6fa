// SPDX-License-Identifier: GPL-2.0-only
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "serial.h"

struct serial {
	pthread_mutex_t lock;
	struct serial_backend backend;

	uint8_t ier, lcr, mcr, lsr, msr, scr, dll, dlm, fcr;
	/* THR emptied since the guest last saw IIR report it. */
	bool thr_int_pending;
	int irq_level;

	uint8_t rx[SERIAL_RX_BUF];
	size_t rx_head, rx_count;
};

struct serial *serial__create(const struct serial_backend *backend)
{
	struct serial *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	s->backend = *backend;
	s->lsr = UART_LSR_THRE | UART_LSR_TEMT;
	s->msr = UART_MSR_DCD | UART_MSR_DSR | UART_MSR_CTS;
	s->dll = 12;		/* 9600 baud, as after a BIOS */
	s->irq_level = -1;	/* unknown: the first update always drives it */
	return s;
}

void serial__destroy(struct serial *s)
{
	if (!s)
		return;
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* The highest-priority pending interrupt, as IIR reports it. */
static uint8_t serial_iir(const struct serial *s)
{
	if ((s->ier & UART_IER_RLSI) && (s->lsr & UART_LSR_OE))
		return UART_IIR_RLSI;
	if ((s->ier & UART_IER_RDI) && s->rx_count)
		return UART_IIR_RDI;
	if ((s->ier & UART_IER_THRI) && s->thr_int_pending)
		return UART_IIR_THRI;
	return UART_IIR_NO_INT;
}

/*
 * ISA interrupts are edge-triggered at the IOAPIC: the line has to drop
 * once the guest has served every source, so the next one is a new edge.
 */
static void serial_update_irq(struct serial *s)
{
	int level = serial_iir(s) != UART_IIR_NO_INT;

	if (level != s->irq_level) {
		s->irq_level = level;
		if (s->backend.set_irq)
			s->backend.set_irq(s->backend.irq_opaque, level);
	}
}

static uint8_t serial_pop_rx(struct serial *s)
{
	uint8_t byte;

	if (!s->rx_count)
		return 0;
	byte = s->rx[s->rx_head];
	s->rx_head = (s->rx_head + 1) % SERIAL_RX_BUF;
	if (!--s->rx_count)
		s->lsr &= ~UART_LSR_DR;
	return byte;
}

static void serial_transmit(struct serial *s, uint8_t byte)
{
	/* In loopback the byte comes back in instead of going out. */
	if (s->mcr & UART_MCR_LOOP) {
		if (s->rx_count < SERIAL_RX_BUF) {
			s->rx[(s->rx_head + s->rx_count) % SERIAL_RX_BUF] = byte;
			s->rx_count++;
			s->lsr |= UART_LSR_DR;
		}
	} else if (s->backend.tx) {
		s->backend.tx(s->backend.tx_opaque, byte);
	}
	/* Sent at once: the holding register is empty again. */
	s->lsr |= UART_LSR_THRE | UART_LSR_TEMT;
	s->thr_int_pending = true;
}

/* In loopback, the modem inputs follow the modem outputs (8250 autoconfig checks this). */
static uint8_t serial_msr(const struct serial *s)
{
	uint8_t msr = 0;

	if (!(s->mcr & UART_MCR_LOOP))
		return s->msr;
	if (s->mcr & UART_MCR_RTS)
		msr |= UART_MSR_CTS;
	if (s->mcr & UART_MCR_DTR)
		msr |= UART_MSR_DSR;
	if (s->mcr & UART_MCR_OUT1)
		msr |= UART_MSR_RI;
	if (s->mcr & UART_MCR_OUT2)
		msr |= UART_MSR_DCD;
	return msr;
}

static uint8_t serial_read_reg(struct serial *s, unsigned int reg)
{
	bool dlab = s->lcr & UART_LCR_DLAB;
	uint8_t v, iir;

	switch (reg) {
	case UART_RBR:
		return dlab ? s->dll : serial_pop_rx(s);
	case UART_IER:
		return dlab ? s->dlm : s->ier;
	case UART_IIR:
		iir = serial_iir(s);
		/* Reading IIR is how a THRE interrupt is acknowledged. */
		if (iir == UART_IIR_THRI)
			s->thr_int_pending = false;
		return iir | ((s->fcr & UART_FCR_ENABLE) ? UART_IIR_FIFO : 0);
	case UART_LCR:
		return s->lcr;
	case UART_MCR:
		return s->mcr;
	case UART_LSR:
		v = s->lsr;
		s->lsr &= ~UART_LSR_OE;	/* error bits clear on read */
		return v;
	case UART_MSR:
		return serial_msr(s);
	case UART_SCR:
		return s->scr;
	}
	return 0xff;
}

static void serial_write_reg(struct serial *s, unsigned int reg, uint8_t v)
{
	bool dlab = s->lcr & UART_LCR_DLAB;

	switch (reg) {
	case UART_THR:
		if (dlab)
			s->dll = v;
		else
			serial_transmit(s, v);
		break;
	case UART_IER:
		if (dlab) {
			s->dlm = v;
			break;
		}
		/* Enabling THRI while THR is empty raises it straight away. */
		if (!(s->ier & UART_IER_THRI) && (v & UART_IER_THRI) &&
		    (s->lsr & UART_LSR_THRE))
			s->thr_int_pending = true;
		s->ier = v & 0x0f;
		break;
	case UART_FCR:
		s->fcr = v & UART_FCR_ENABLE;
		if (v & UART_FCR_CLR_RX) {
			s->rx_count = 0;
			s->lsr &= ~UART_LSR_DR;
		}
		break;
	case UART_LCR:
		s->lcr = v;
		break;
	case UART_MCR:
		s->mcr = v & 0x1f;
		break;
	case UART_SCR:
		s->scr = v;
		break;
	}
}

static void serial_read(void *opaque, uint64_t offset, void *data,
			unsigned int len)
{
	struct serial *s = opaque;

	memset(data, 0xff, len);
	if (len != 1 || offset >= UART_NR_REGS)
		return;
	pthread_mutex_lock(&s->lock);
	*(uint8_t *)data = serial_read_reg(s, offset);
	serial_update_irq(s);
	pthread_mutex_unlock(&s->lock);
}

static void serial_write(void *opaque, uint64_t offset, const void *data,
			 unsigned int len)
{
	struct serial *s = opaque;

	if (len != 1 || offset >= UART_NR_REGS)
		return;
	pthread_mutex_lock(&s->lock);
	serial_write_reg(s, offset, *(const uint8_t *)data);
	serial_update_irq(s);
	pthread_mutex_unlock(&s->lock);
}

const struct bus_dev_ops serial__ops = {
	.read = serial_read,
	.write = serial_write,
};

int serial__attach(struct serial *s, struct bus *pio, uint64_t base)
{
	return bus__register(pio, base, UART_NR_REGS, &serial__ops, s);
}

size_t serial__rx_room(struct serial *s)
{
	size_t room;

	pthread_mutex_lock(&s->lock);
	room = SERIAL_RX_BUF - s->rx_count;
	pthread_mutex_unlock(&s->lock);
	return room;
}

size_t serial__receive(struct serial *s, const uint8_t *buf, size_t len)
{
	size_t n = 0;

	pthread_mutex_lock(&s->lock);
	while (n < len && s->rx_count < SERIAL_RX_BUF) {
		s->rx[(s->rx_head + s->rx_count) % SERIAL_RX_BUF] = buf[n++];
		s->rx_count++;
	}
	if (s->rx_count)
		s->lsr |= UART_LSR_DR;
	serial_update_irq(s);
	pthread_mutex_unlock(&s->lock);
	return n;
}
