// SPDX-License-Identifier: GPL-2.0-only
/*
 * The virtio-blk device on its transport - virtio-mmio register file,
 * queues, the io_uring backend on a real file - driven the way a guest
 * driver does (blk_driver.c), and the counters it keeps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_mmio.h>

#include "blk_driver.h"
#include "unit.h"
#include "vm.h"

START_TEST(test_identity)
{
	ck_assert_uint_eq(rd(VIRTIO_MMIO_MAGIC_VALUE), VIRTIO_MMIO_MAGIC);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_VERSION), 2);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_DEVICE_ID), 2);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_VENDOR_ID), VIRTIO_MMIO_VENDOR);
	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_DEVICE_FEATURES) & 1, 1); /* VERSION_1 */
	wr(VIRTIO_MMIO_QUEUE_SEL, 0);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_QUEUE_NUM_MAX), VIRTIO_BLK_QUEUE_SIZE);
	wr(VIRTIO_MMIO_QUEUE_SEL, 2);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_QUEUE_NUM_MAX), 0);	/* no queue 2 */
}
END_TEST

START_TEST(test_config_space)
{
	uint64_t cap;
	uint32_t v;
	uint16_t nq;

	virtio_mmio__ops.read(mmio, VIRTIO_MMIO_CONFIG_OFF, &cap, 8);
	ck_assert_uint_eq(cap, DISK_SIZE / 512);
	virtio_mmio__ops.read(mmio, VIRTIO_MMIO_CONFIG_OFF + 20, &v, 4);
	ck_assert(v == 512 || v == 4096);			/* blk_size */
	virtio_mmio__ops.read(mmio, VIRTIO_MMIO_CONFIG_OFF + 34, &nq, 2);
	ck_assert_uint_eq(nq, 2);				/* num_queues */
	/* Past the config struct: zeros, no crash. */
	v = 0xdead;
	virtio_mmio__ops.read(mmio, VIRTIO_MMIO_WINDOW - 4, &v, 4);
	ck_assert_uint_eq(v, 0);
}
END_TEST

START_TEST(test_bad_register_access)
{
	uint32_t v = 0x1234;
	uint8_t b = 0x55;

	/* Unknown offset, wrong width, misaligned: ignored, reads 0. */
	ck_assert_uint_eq(rd(0x0f0), 0);
	wr(0x0f0, 1);
	virtio_mmio__ops.read(mmio, VIRTIO_MMIO_MAGIC_VALUE, &b, 1);
	ck_assert_uint_eq(b, 0);
	virtio_mmio__ops.read(mmio, VIRTIO_MMIO_MAGIC_VALUE + 2, &v, 4);
	ck_assert_uint_eq(v, 0);
	b = 0xff;
	virtio_mmio__ops.write(mmio, VIRTIO_MMIO_STATUS, &b, 1);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_STATUS), 0);
	/* Config space is read-only. */
	v = 0;
	virtio_mmio__ops.write(mmio, VIRTIO_MMIO_CONFIG_OFF, &v, 4);
	virtio_mmio__ops.read(mmio, VIRTIO_MMIO_CONFIG_OFF, &v, 4);
	ck_assert_uint_eq(v, DISK_SIZE / 512);
	/* Notify before DRIVER_OK: nothing happens. */
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1000);
}
END_TEST

START_TEST(test_features_refused)
{
	wr(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	/* Legacy driver: no VERSION_1. */
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, 1u << VIRTIO_BLK_F_FLUSH);
	wr(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			       VIRTIO_CONFIG_S_FEATURES_OK);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_FEATURES_OK, 0);
	/* A feature we never offered. */
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, 1 | 1u << 3);
	wr(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			       VIRTIO_CONFIG_S_FEATURES_OK);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_FEATURES_OK, 0);
	/* DRIVER_OK without FEATURES_OK: NEEDS_RESET, config interrupt. */
	wr(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			       VIRTIO_CONFIG_S_DRIVER_OK);
	ck_assert(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_CONFIG);
	ck_assert_int_eq(irq_level, 1);
	/* Reset clears it all. */
	wr(VIRTIO_MMIO_STATUS, 0);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_STATUS), 0);
	ck_assert_int_eq(irq_level, 0);
}
END_TEST

static const struct {
	const char *what;
	uint32_t num;
	uint64_t desc;
} bad_queue[] = {
	{ "size not a power of two", 12, DESC },
	{ "size above QueueNumMax", 512, DESC },
	{ "size 0", 0, DESC },
	{ "ring outside RAM", QS, MEM_SIZE },
	{ "ring above 4 GiB", QS, 1ULL << 40 },
	{ "misaligned ring", QS, DESC + 4 },
};

START_TEST(test_bad_queue_setup)
{
	wr(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	setup_queue(0, bad_queue[_i].num, bad_queue[_i].desc);
	ck_assert_msg(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET,
		      "%s accepted", bad_queue[_i].what);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_QUEUE_READY), 0);
}
END_TEST

START_TEST(test_io)
{
	uint8_t *buf = gmem + BUF;
	unsigned int i;

	driver_init();
	for (i = 0; i < 8192; i++)
		buf[i] = i * 7 + 3;
	ck_assert_int_eq(request(VIRTIO_BLK_T_OUT, 16, BUF, 8192, false), 0);
	ck_assert_int_eq(irq_level, 1);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_VRING);
	wr(VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_VRING);
	ck_assert_int_eq(irq_level, 0);
	ck_assert_uint_eq(gused()->ring[0].len, 1);

	memset(buf, 0, 8192);
	ck_assert_int_eq(request(VIRTIO_BLK_T_IN, 16, BUF, 8192, true), 0);
	ck_assert_uint_eq(gused()->ring[1].len, 8193);
	for (i = 0; i < 8192; i++)
		ck_assert_uint_eq(buf[i], (uint8_t)(i * 7 + 3));

	/* A misaligned guest buffer goes through the bounce buffer. */
	memset(buf, 0, 8192);
	ck_assert_int_eq(request(VIRTIO_BLK_T_IN, 16, BUF + 1, 512, true), 0);
	for (i = 0; i < 512; i++)
		ck_assert_uint_eq(buf[i + 1], (uint8_t)(i * 7 + 3));

	ck_assert_int_eq(request(VIRTIO_BLK_T_FLUSH, 0, 0, 0, false), 0);
	ck_assert_int_eq(request(VIRTIO_BLK_T_GET_ID, 0, BUF, 20, true), 0);
	ck_assert_str_eq((char *)buf, "gpin-blk0");

	/* Past the end: IOERR, and the VMM goes on. */
	ck_assert_int_eq(request(VIRTIO_BLK_T_IN, DISK_SIZE / 512, BUF, 512,
				 true), VIRTIO_BLK_S_IOERR);
	ck_assert_int_eq(request(99, 0, 0, 0, false), VIRTIO_BLK_S_UNSUPP);
}
END_TEST

START_TEST(test_write_zeroes)
{
	struct virtio_blk_discard_write_zeroes *s = (void *)(gmem + BUF + 4096);
	uint8_t *buf = gmem + BUF;
	unsigned int i;

	driver_init();
	memset(buf, 0xaa, 4096);
	ck_assert_int_eq(request(VIRTIO_BLK_T_OUT, 0, BUF, 4096, false), 0);
	*s = (struct virtio_blk_discard_write_zeroes) { .sector = 0, .num_sectors = 8 };
	ck_assert_int_eq(request(VIRTIO_BLK_T_WRITE_ZEROES, 0, BUF + 4096, 16,
				 false), 0);
	ck_assert_int_eq(request(VIRTIO_BLK_T_IN, 0, BUF, 4096, true), 0);
	for (i = 0; i < 4096; i++)
		ck_assert_uint_eq(buf[i], 0);
	ck_assert_int_eq(request(VIRTIO_BLK_T_DISCARD, 0, BUF + 4096, 16,
				 false), 0);
}
END_TEST

START_TEST(test_read_only)
{
	uint32_t f;

	virtio_mmio__destroy(mmio);
	virtio_blk__destroy(blk);
	make_device(true);
	f = rd(VIRTIO_MMIO_DEVICE_FEATURES);
	ck_assert(f & 1u << VIRTIO_BLK_F_RO);
	ck_assert(!(f & 1u << VIRTIO_BLK_F_DISCARD));
	driver_init();
	ck_assert_int_eq(request(VIRTIO_BLK_T_IN, 0, BUF, 512, true), 0);
	ck_assert_int_eq(request(VIRTIO_BLK_T_OUT, 0, BUF, 512, false),
			 VIRTIO_BLK_S_IOERR);
}
END_TEST

/* What virtio_blk__counters() reported, in order. */
struct seen_counter {
	char dev[16], name[16];
	uint64_t value;
};
static struct seen_counter seen[8];
static unsigned int nseen;

static void collect(void *opaque, const char *dev, const char *name,
		    uint64_t value)
{
	ck_assert_ptr_eq(opaque, seen);
	ck_assert_uint_lt(nseen, sizeof(seen) / sizeof(seen[0]));
	snprintf(seen[nseen].dev, sizeof(seen[nseen].dev), "%s", dev);
	snprintf(seen[nseen].name, sizeof(seen[nseen].name), "%s", name);
	seen[nseen++].value = value;
}

static void expect_counter(unsigned int i, const char *dev, const char *name,
			   uint64_t value)
{
	ck_assert_str_eq(seen[i].dev, dev);
	ck_assert_str_eq(seen[i].name, name);
	ck_assert_uint_eq(seen[i].value, value);
}

/*
 * The counters of vm.counters and SIGUSR1 while the device runs: every
 * request counts, only completed READ/WRITE data counts as bytes, and
 * IOERR and UNSUPP count as errors; queue 1 saw nothing.
 */
START_TEST(test_counters)
{
	struct vm vm = { .ndisks = 1, .disks = { blk } };
	char *text = NULL;
	size_t len = 0;
	FILE *mem;

	driver_init();
	ck_assert_int_eq(request(VIRTIO_BLK_T_OUT, 16, BUF, 8192, false), 0);
	ck_assert_int_eq(request(VIRTIO_BLK_T_IN, 16, BUF, 4096, true), 0);
	ck_assert_int_eq(request(VIRTIO_BLK_T_FLUSH, 0, 0, 0, false), 0);
	ck_assert_int_eq(request(VIRTIO_BLK_T_IN, DISK_SIZE / 512, BUF, 512,
				 true), VIRTIO_BLK_S_IOERR);
	ck_assert_int_eq(request(99, 0, 0, 0, false), VIRTIO_BLK_S_UNSUPP);

	nseen = 0;
	vm__counters(&vm, collect, seen);
	ck_assert_uint_eq(nseen, 6);
	expect_counter(0, "blk0-q0", "requests", 5);
	expect_counter(1, "blk0-q0", "bytes", 8192 + 4096);
	expect_counter(2, "blk0-q0", "errors", 2);
	expect_counter(3, "blk0-q1", "requests", 0);
	expect_counter(4, "blk0-q1", "bytes", 0);
	expect_counter(5, "blk0-q1", "errors", 0);

	mem = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(mem);
	vm__print_disk_stats(&vm, mem);
	ck_assert_int_eq(fclose(mem), 0);
	ck_assert_str_eq(text,
		"gpin-vmm: blk0-q0: 5 requests, 12288 bytes, 2 errors\n"
		"gpin-vmm: blk0-q1: 0 requests, 0 bytes, 0 errors\n");
	free(text);
}
END_TEST

/* A looping chain marks the device broken; a reset brings it back. */
START_TEST(test_broken_ring_needs_reset)
{
	struct vring_avail *a = (struct vring_avail *)(gmem + AVAIL);

	driver_init();
	*gdesc(0) = (struct vring_desc) { HDR, 16, VRING_DESC_F_NEXT, 1 };
	*gdesc(1) = (struct vring_desc) { HDR, 16, VRING_DESC_F_NEXT, 0 };
	a->ring[0] = 0;
	a->idx = ++avail_idx;
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	ck_assert(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET);
	ck_assert(rd(VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG);
	/* Further notifies are ignored. */
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	ck_assert_uint_eq(gused()->idx, 0);

	memset(gmem, 0, 0x4000);
	avail_idx = 0;
	driver_init();
	ck_assert_int_eq(request(VIRTIO_BLK_T_FLUSH, 0, 0, 0, false), 0);
}
END_TEST

/* The avail index jumps far ahead: NEEDS_RESET, not a huge loop. */
START_TEST(test_avail_jump_needs_reset)
{
	struct vring_avail *a = (struct vring_avail *)(gmem + AVAIL);

	driver_init();
	a->idx = 0x8000;
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	ck_assert(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET);
}
END_TEST

START_TEST(test_second_queue)
{
	driver_init();
	/* Queue 1 was not set up: a notify for it is ignored. */
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET, 0);
}
END_TEST

/*
 * One GET_ID request, completed on the notifying thread, so the interrupt
 * decision is made by the time it returns; then ACKs.  Returns whether
 * the device raised the interrupt for it.
 */
static bool get_id_irq(void)
{
	int before = __atomic_load_n(&irq_raises, __ATOMIC_SEQ_CST);
	bool raised;

	ck_assert_int_eq(request(VIRTIO_BLK_T_GET_ID, 0, BUF, 20, true), 0);
	raised = __atomic_load_n(&irq_raises, __ATOMIC_SEQ_CST) != before;
	wr(VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_VRING);
	ck_assert_int_eq(irq_level, 0);
	return raised;
}

/* EVENT_IDX offered, negotiated, and the queue then follows the driver's. */
START_TEST(test_event_idx)
{
	struct vring_avail *a = (struct vring_avail *)(gmem + AVAIL);

	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	ck_assert(rd(VIRTIO_MMIO_DEVICE_FEATURES) & 1u << VIRTIO_RING_F_EVENT_IDX);
	*gavail_event() = 0xbeef;
	driver_init();
	/* DRIVER_OK: notify for the first chain, whatever the ring held. */
	ck_assert_uint_eq(*gavail_event(), 0);
	*gused_event() = 1;
	ck_assert(!get_id_irq());			/* used 0 */
	ck_assert_uint_eq(*gavail_event(), 1);	/* re-armed after serving */
	ck_assert(get_id_irq());			/* used 1 */
	ck_assert(!get_id_irq());			/* 1 was reported */
	/* NO_INTERRUPT is not ours to look at now. */
	a->flags = VRING_AVAIL_F_NO_INTERRUPT;
	*gused_event() = 3;
	ck_assert(get_id_irq());
	ck_assert_uint_eq(gused()->idx, 4);
	ck_assert_uint_eq(*gavail_event(), 4);
	ck_assert_uint_eq(gused()->flags, 0);
}
END_TEST

/* A driver that refuses EVENT_IDX gets the NO_INTERRUPT behaviour. */
START_TEST(test_event_idx_refused)
{
	struct vring_avail *a = (struct vring_avail *)(gmem + AVAIL);

	*gavail_event() = 0xbeef;
	driver_init_refusing(1ULL << VIRTIO_RING_F_EVENT_IDX);
	*gused_event() = 100;
	ck_assert(get_id_irq());
	ck_assert(get_id_irq());
	a->flags = VRING_AVAIL_F_NO_INTERRUPT;
	*gused_event() = 2;
	ck_assert(!get_id_irq());
	ck_assert_uint_eq(gused()->idx, 3);
	ck_assert_uint_eq(*gavail_event(), 0xbeef);	/* never written */
	ck_assert_uint_eq(gused()->flags, 0);
}
END_TEST

static Suite *blk_device_suite(void)
{
	Suite *s = suite_create("blk_device");
	TCase *tc;

	tc = tcase_create("transport");
	tcase_add_checked_fixture(tc, dev_setup, dev_teardown);
	tcase_add_test(tc, test_identity);
	tcase_add_test(tc, test_config_space);
	tcase_add_test(tc, test_bad_register_access);
	tcase_add_test(tc, test_features_refused);
	tcase_add_loop_test(tc, test_bad_queue_setup, 0,
			    sizeof(bad_queue) / sizeof(bad_queue[0]));
	tcase_add_test(tc, test_second_queue);
	suite_add_tcase(s, tc);

	tc = tcase_create("device");
	tcase_add_checked_fixture(tc, dev_setup, dev_teardown);
	tcase_add_test(tc, test_io);
	tcase_add_test(tc, test_counters);
	tcase_add_test(tc, test_write_zeroes);
	tcase_add_test(tc, test_read_only);
	tcase_add_test(tc, test_broken_ring_needs_reset);
	tcase_add_test(tc, test_avail_jump_needs_reset);
	tcase_add_test(tc, test_event_idx);
	tcase_add_test(tc, test_event_idx_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(blk_device_suite());
}
