// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "devices/serial.h"
#include "unit.h"

/* A fake terminal and interrupt line that record what the UART does. */
struct fake {
	uint8_t out[256];
	size_t nout;
	int level;
	int raises;
};

static struct fake fake;
static struct serial *uart;

static void fake_tx(void *opaque, uint8_t b)
{
	struct fake *f = opaque;

	if (f->nout < sizeof(f->out))
		f->out[f->nout++] = b;
}

static void fake_irq(void *opaque, int level)
{
	struct fake *f = opaque;

	if (level && !f->level)
		f->raises++;
	f->level = level;
}

static void setup(void)
{
	struct serial_backend b = { fake_tx, &fake, fake_irq, &fake };

	memset(&fake, 0, sizeof(fake));
	uart = serial__create(&b);
	ck_assert_ptr_nonnull(uart);
}

static void teardown(void)
{
	serial__destroy(uart);
}

static uint8_t rd(unsigned int reg)
{
	uint8_t v;

	serial__ops.read(uart, reg, &v, 1);
	return v;
}

static void wr(unsigned int reg, uint8_t v)
{
	serial__ops.write(uart, reg, &v, 1);
}

START_TEST(test_transmit)
{
	wr(UART_THR, 'h');
	wr(UART_THR, 'i');
	ck_assert_uint_eq(fake.nout, 2);
	ck_assert_mem_eq(fake.out, "hi", 2);
	ck_assert_uint_eq(rd(UART_LSR) & (UART_LSR_THRE | UART_LSR_TEMT),
			  UART_LSR_THRE | UART_LSR_TEMT);
	/* No interrupts enabled: the line stays low. */
	ck_assert_int_eq(fake.level, 0);
	ck_assert_uint_eq(rd(UART_IIR) & 0x0f, UART_IIR_NO_INT);
}
END_TEST

START_TEST(test_thre_interrupt_on_enable)
{
	wr(UART_IER, UART_IER_THRI);
	ck_assert_int_eq(fake.level, 1);
	/* Reading IIR reports THRE once and acknowledges it. */
	ck_assert_uint_eq(rd(UART_IIR) & 0x0f, UART_IIR_THRI);
	ck_assert_int_eq(fake.level, 0);
	ck_assert_uint_eq(rd(UART_IIR) & 0x0f, UART_IIR_NO_INT);
}
END_TEST

START_TEST(test_thre_interrupt_after_each_byte)
{
	wr(UART_IER, UART_IER_THRI);
	rd(UART_IIR);
	wr(UART_THR, 'a');
	ck_assert_int_eq(fake.level, 1);
	ck_assert_int_eq(fake.raises, 2);	/* a new edge for every byte */
	rd(UART_IIR);
	ck_assert_int_eq(fake.level, 0);
	wr(UART_IER, 0);
	wr(UART_THR, 'b');
	ck_assert_int_eq(fake.level, 0);
}
END_TEST

START_TEST(test_receive_interrupt_and_data)
{
	const uint8_t in[] = "ok";

	wr(UART_IER, UART_IER_RDI);
	ck_assert_int_eq(fake.level, 0);
	ck_assert_uint_eq(serial__receive(uart, in, 2), 2);
	ck_assert_int_eq(fake.level, 1);
	ck_assert_uint_eq(rd(UART_LSR) & UART_LSR_DR, UART_LSR_DR);
	ck_assert_uint_eq(rd(UART_IIR) & 0x0f, UART_IIR_RDI);
	ck_assert_uint_eq(rd(UART_RBR), 'o');
	ck_assert_int_eq(fake.level, 1);	/* one byte still waiting */
	ck_assert_uint_eq(rd(UART_RBR), 'k');
	ck_assert_int_eq(fake.level, 0);
	ck_assert_uint_eq(rd(UART_LSR) & UART_LSR_DR, 0);
}
END_TEST

START_TEST(test_rx_priority_over_thre)
{
	const uint8_t in = 'x';

	wr(UART_IER, UART_IER_RDI | UART_IER_THRI);
	serial__receive(uart, &in, 1);
	ck_assert_uint_eq(rd(UART_IIR) & 0x0f, UART_IIR_RDI);
	rd(UART_RBR);
	ck_assert_uint_eq(rd(UART_IIR) & 0x0f, UART_IIR_THRI);
}
END_TEST

START_TEST(test_rx_buffer_full)
{
	static uint8_t big[SERIAL_RX_BUF + 10];

	ck_assert_uint_eq(serial__receive(uart, big, sizeof(big)), SERIAL_RX_BUF);
	ck_assert_uint_eq(serial__rx_room(uart), 0);
	rd(UART_RBR);
	ck_assert_uint_eq(serial__rx_room(uart), 1);
}
END_TEST

START_TEST(test_fifo_and_iir_bits)
{
	wr(UART_FCR, UART_FCR_ENABLE);
	ck_assert_uint_eq(rd(UART_IIR) & UART_IIR_FIFO, UART_IIR_FIFO);
	wr(UART_FCR, 0);
	ck_assert_uint_eq(rd(UART_IIR) & UART_IIR_FIFO, 0);
}
END_TEST

START_TEST(test_divisor_latch)
{
	wr(UART_LCR, UART_LCR_DLAB | 0x03);
	wr(UART_THR, 1);	/* DLL, not transmitted */
	wr(UART_IER, 0);	/* DLM */
	ck_assert_uint_eq(rd(UART_RBR), 1);
	ck_assert_uint_eq(fake.nout, 0);
	wr(UART_LCR, 0x03);
	ck_assert_uint_eq(rd(UART_LCR), 0x03);
}
END_TEST

START_TEST(test_scratch_and_loopback)
{
	wr(UART_SCR, 0xa5);
	ck_assert_uint_eq(rd(UART_SCR), 0xa5);
	/* Linux's autoconfig: loop with RTS|OUT2 must read CTS|DCD. */
	wr(UART_MCR, UART_MCR_LOOP | UART_MCR_RTS | UART_MCR_OUT2);
	ck_assert_uint_eq(rd(UART_MSR) & 0xf0, UART_MSR_CTS | UART_MSR_DCD);
	wr(UART_THR, 'L');
	ck_assert_uint_eq(fake.nout, 0);
	ck_assert_uint_eq(rd(UART_RBR), 'L');
	wr(UART_MCR, UART_MCR_OUT2);
	ck_assert_uint_eq(rd(UART_MSR) & 0xb0, 0xb0);
}
END_TEST

START_TEST(test_bad_offsets_and_sizes)
{
	uint32_t v = 0;

	serial__ops.read(uart, 8, &v, 1);
	ck_assert_uint_eq(v & 0xff, 0xff);
	serial__ops.read(uart, 0, &v, 4);
	ck_assert_uint_eq(v, 0xffffffff);
	serial__ops.write(uart, 0, &v, 2);
	serial__ops.write(uart, 1000, &v, 1);
	ck_assert_uint_eq(fake.nout, 0);
}
END_TEST

static Suite *serial_suite(void)
{
	Suite *s = suite_create("serial");
	TCase *tc = tcase_create("16550a");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_transmit);
	tcase_add_test(tc, test_thre_interrupt_on_enable);
	tcase_add_test(tc, test_thre_interrupt_after_each_byte);
	tcase_add_test(tc, test_receive_interrupt_and_data);
	tcase_add_test(tc, test_rx_priority_over_thre);
	tcase_add_test(tc, test_rx_buffer_full);
	tcase_add_test(tc, test_fifo_and_iir_bits);
	tcase_add_test(tc, test_divisor_latch);
	tcase_add_test(tc, test_scratch_and_loopback);
	tcase_add_test(tc, test_bad_offsets_and_sizes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(serial_suite());
}
