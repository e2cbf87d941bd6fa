// SPDX-License-Identifier: GPL-2.0-only
/*
 * The split-ring accessor on crafted rings in plain memory: what a driver
 * does right, and each way a hostile one can break the ring; and when it
 * wants interrupts and notifications, with and without EVENT_IDX.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "virtio/virtqueue.h"

#define MEM_SIZE	0x40000ULL
#define QSIZE		16
#define DESC_GPA	0x1000ULL
#define AVAIL_GPA	0x2000ULL
#define USED_GPA	0x3000ULL
#define DATA_GPA	0x10000ULL

static uint8_t *mem;
static struct virtq vq;
static struct virtq_buf bufs[QSIZE];
static struct virtq_chain chain;

static void *translate(void *opaque, uint64_t gpa, uint64_t len)
{
	if (gpa + len < gpa || gpa + len > MEM_SIZE)
		return NULL;
	return (uint8_t *)opaque + gpa;
}

static struct vring_desc *desc(unsigned int i)
{
	return (struct vring_desc *)(mem + DESC_GPA) + i;
}

static struct vring_avail *avail(void)
{
	return (struct vring_avail *)(mem + AVAIL_GPA);
}

static struct vring_used *used(void)
{
	return (struct vring_used *)(mem + USED_GPA);
}

/*
 * The event fields, found from the layout in the specification (2.7.6,
 * 2.7.8) rather than with the header's macros the code under test uses.
 */
static uint16_t *used_event(void)
{
	return (uint16_t *)(mem + AVAIL_GPA + 4 + 2 * QSIZE);
}

static uint16_t *avail_event(void)
{
	return (uint16_t *)(mem + USED_GPA + 4 + 8 * QSIZE);
}

static void set_desc(unsigned int i, uint64_t addr, uint32_t len,
		     uint16_t flags, uint16_t next)
{
	*desc(i) = (struct vring_desc) {
		.addr = addr, .len = len, .flags = flags, .next = next,
	};
}

/* Makes @head available at the next avail slot. */
static void offer(uint16_t head)
{
	struct vring_avail *a = avail();

	a->ring[a->idx % QSIZE] = head;
	a->idx++;
}

static void setup(void)
{
	struct virtq_mem m;

	mem = calloc(1, MEM_SIZE);
	ck_assert_ptr_nonnull(mem);
	m = (struct virtq_mem) { .translate = translate, .opaque = mem };
	ck_assert_int_eq(virtq__init(&vq, &m, QSIZE, DESC_GPA, AVAIL_GPA,
				     USED_GPA), 0);
	chain = (struct virtq_chain) { .bufs = bufs };
}

static void teardown(void)
{
	free(mem);
	mem = NULL;
}

START_TEST(test_init_ok)
{
	ck_assert_uint_eq(vq.size, QSIZE);
	ck_assert_uint_eq(vq.last_avail, 0);
	ck_assert_uint_eq(vq.used_idx, 0);
	ck_assert_int_eq(virtq__pop(&vq, &chain), 0);	/* empty */
}
END_TEST

static const struct {
	const char *what;
	unsigned int size;
	uint64_t desc, avail, used;
} bad_init[] = {
	{ "size 0",		0,	DESC_GPA, AVAIL_GPA, USED_GPA },
	{ "size 3",		3,	DESC_GPA, AVAIL_GPA, USED_GPA },
	{ "size too big",	2048,	DESC_GPA, AVAIL_GPA, USED_GPA },
	{ "desc misaligned",	QSIZE,	DESC_GPA + 8, AVAIL_GPA, USED_GPA },
	{ "avail misaligned",	QSIZE,	DESC_GPA, AVAIL_GPA + 1, USED_GPA },
	{ "used misaligned",	QSIZE,	DESC_GPA, AVAIL_GPA, USED_GPA + 2 },
	{ "desc past RAM",	QSIZE,	MEM_SIZE - 16, AVAIL_GPA, USED_GPA },
	{ "avail past RAM",	QSIZE,	DESC_GPA, MEM_SIZE - 8, USED_GPA },
	{ "used past RAM",	QSIZE,	DESC_GPA, AVAIL_GPA, MEM_SIZE - 4 },
	{ "desc wraps",		QSIZE,	~0ULL - 15, AVAIL_GPA, USED_GPA },
};

START_TEST(test_init_rejects)
{
	struct virtq_mem m = { .translate = translate, .opaque = mem };
	struct virtq q = { 0 };

	ck_assert_msg(virtq__init(&q, &m, bad_init[_i].size, bad_init[_i].desc,
				  bad_init[_i].avail, bad_init[_i].used) == -EINVAL,
		      "%s accepted", bad_init[_i].what);
}
END_TEST

START_TEST(test_pop_chain)
{
	set_desc(0, DATA_GPA, 16, VRING_DESC_F_NEXT, 5);
	set_desc(5, DATA_GPA + 0x100, 512, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 2);
	set_desc(2, DATA_GPA + 0x400, 1, VRING_DESC_F_WRITE, 0);
	offer(0);
	ck_assert_int_eq(virtq__pop(&vq, &chain), 1);
	ck_assert_uint_eq(chain.head, 0);
	ck_assert_uint_eq(chain.nbufs, 3);
	ck_assert_uint_eq(chain.nreadable, 1);
	ck_assert_uint_eq(chain.readable_len, 16);
	ck_assert_uint_eq(chain.writable_len, 513);
	ck_assert_ptr_eq(bufs[0].addr, mem + DATA_GPA);
	ck_assert(!bufs[0].writable);
	ck_assert_ptr_eq(bufs[1].addr, mem + DATA_GPA + 0x100);
	ck_assert(bufs[1].writable && bufs[2].writable);
	ck_assert_uint_eq(bufs[2].len, 1);
	ck_assert_int_eq(virtq__pop(&vq, &chain), 0);
}
END_TEST

/* A chain may use every descriptor once: exactly the queue size is fine. */
START_TEST(test_pop_full_length_chain)
{
	unsigned int i;

	for (i = 0; i < QSIZE; i++)
		set_desc(i, DATA_GPA + i * 16, 16,
			 i + 1 < QSIZE ? VRING_DESC_F_NEXT : 0, i + 1);
	offer(0);
	ck_assert_int_eq(virtq__pop(&vq, &chain), 1);
	ck_assert_uint_eq(chain.nbufs, QSIZE);
}
END_TEST

START_TEST(test_pop_loop)
{
	set_desc(3, DATA_GPA, 16, VRING_DESC_F_NEXT, 4);
	set_desc(4, DATA_GPA, 16, VRING_DESC_F_NEXT, 3);
	offer(3);
	ck_assert_int_eq(virtq__pop(&vq, &chain), -ELOOP);
	ck_assert_uint_eq(chain.head, 3);
}
END_TEST

START_TEST(test_pop_self_loop)
{
	set_desc(7, DATA_GPA, 16, VRING_DESC_F_NEXT, 7);
	offer(7);
	ck_assert_int_eq(virtq__pop(&vq, &chain), -ELOOP);
}
END_TEST

/* Table of single bad descriptors at head 1 and what pop must say. */
static const struct {
	const char *what;
	uint64_t addr;
	uint32_t len;
	uint16_t flags, next;
	int want;
} bad_desc[] = {
	{ "addr past RAM", MEM_SIZE, 16, 0, 0, -EFAULT },
	{ "len past RAM", MEM_SIZE - 8, 16, 0, 0, -EFAULT },
	{ "addr+len wraps", ~0ULL - 7, 16, 0, 0, -EFAULT },
	{ "huge len", DATA_GPA, 0xffffffffu, 0, 0, -EFAULT },
	{ "next out of range", DATA_GPA, 16, VRING_DESC_F_NEXT, QSIZE, -ERANGE },
	{ "next 0xffff", DATA_GPA, 16, VRING_DESC_F_NEXT, 0xffff, -ERANGE },
	{ "indirect", DATA_GPA, 16, VRING_DESC_F_INDIRECT, 0, -EINVAL },
};

START_TEST(test_pop_bad_desc)
{
	set_desc(1, bad_desc[_i].addr, bad_desc[_i].len, bad_desc[_i].flags,
		 bad_desc[_i].next);
	offer(1);
	ck_assert_msg(virtq__pop(&vq, &chain) == bad_desc[_i].want,
		      "%s", bad_desc[_i].what);
}
END_TEST

START_TEST(test_pop_readable_after_writable)
{
	set_desc(0, DATA_GPA, 16, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 1);
	set_desc(1, DATA_GPA, 16, 0, 0);
	offer(0);
	ck_assert_int_eq(virtq__pop(&vq, &chain), -EINVAL);
}
END_TEST

/* Zero-length buffers are legal in the ring; the device judges them. */
START_TEST(test_pop_zero_length)
{
	set_desc(0, DATA_GPA, 0, VRING_DESC_F_NEXT, 1);
	set_desc(1, DATA_GPA, 0, VRING_DESC_F_WRITE, 0);
	offer(0);
	ck_assert_int_eq(virtq__pop(&vq, &chain), 1);
	ck_assert_uint_eq(chain.nbufs, 2);
	ck_assert_uint_eq(chain.readable_len + chain.writable_len, 0);
}
END_TEST

START_TEST(test_pop_head_out_of_range)
{
	avail()->ring[0] = QSIZE;
	avail()->idx = 1;
	ck_assert_int_eq(virtq__pop(&vq, &chain), -ERANGE);
}
END_TEST

START_TEST(test_avail_too_far_ahead)
{
	set_desc(0, DATA_GPA, 16, 0, 0);
	avail()->idx = QSIZE + 1;
	ck_assert_int_eq(virtq__pop(&vq, &chain), -EPROTO);
	/* Exactly a full ring is fine. */
	avail()->idx = QSIZE;
	ck_assert_int_eq(virtq__pop(&vq, &chain), 1);
}
END_TEST

/* The 16-bit indexes wrap: pending is computed modulo 2^16. */
START_TEST(test_avail_index_wraps)
{
	unsigned int i;

	set_desc(0, DATA_GPA, 16, 0, 0);
	vq.last_avail = 0xfffe;
	vq.used_idx = 0xfffe;
	avail()->idx = 0xfffe;
	for (i = 0; i < 4; i++)
		offer(0);
	ck_assert_uint_eq(avail()->idx, 2);
	ck_assert_uint_eq(virtq__pending(&vq), 4);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(virtq__pop(&vq, &chain), 1);
		virtq__push(&vq, chain.head, 1);
	}
	ck_assert_int_eq(virtq__pop(&vq, &chain), 0);
	ck_assert_uint_eq(used()->idx, 2);
	ck_assert_uint_eq(vq.last_avail, 2);
}
END_TEST

START_TEST(test_push)
{
	virtq__push(&vq, 9, 513);
	ck_assert_uint_eq(used()->idx, 1);
	ck_assert_uint_eq(used()->ring[0].id, 9);
	ck_assert_uint_eq(used()->ring[0].len, 513);
	virtq__push(&vq, 3, 1);
	ck_assert_uint_eq(used()->idx, 2);
	ck_assert_uint_eq(used()->ring[1].id, 3);
}
END_TEST

START_TEST(test_needs_interrupt)
{
	ck_assert(virtq__needs_interrupt(&vq));
	avail()->flags = VRING_AVAIL_F_NO_INTERRUPT;
	ck_assert(!virtq__needs_interrupt(&vq));
}
END_TEST

/* Pushes @n used entries and asks whether the driver wants to know. */
static bool push_and_decide(unsigned int n)
{
	while (n--)
		virtq__push(&vq, 0, 1);
	return virtq__needs_interrupt(&vq);
}

/* Takes used->idx to @idx the way the device does, one decision at the end. */
static void advance_used(uint16_t idx)
{
	while (vq.used_idx != idx)
		virtq__push(&vq, 0, 1);
	(void)virtq__needs_interrupt(&vq);
}

START_TEST(test_event_idx_off_after_init)
{
	ck_assert(!vq.event_idx);
	/* Without EVENT_IDX used_event means nothing, only the flag counts. */
	*used_event() = 5;
	ck_assert(push_and_decide(1));
	ck_assert(push_and_decide(0));		/* no pushes: the flag alone */
	avail()->flags = VRING_AVAIL_F_NO_INTERRUPT;
	*used_event() = 0;
	ck_assert(!push_and_decide(1));
	ck_assert_uint_eq(used()->idx, 2);
}
END_TEST

/*
 * One decision: used->idx starts at @start (the previous decision there),
 * the driver asked for an interrupt once entry @event is used, the device
 * pushes @n.  Interrupt iff @event is in [start, start + n) modulo 2^16.
 */
static const struct {
	const char *what;
	uint16_t start, event, n;
	bool want;
} event_cases[] = {
	{ "first entry after reset",	0, 0, 1, true },
	{ "nothing pushed",		0, 0, 0, false },
	{ "event one ahead",		0, 1, 1, false },
	{ "batch reaches event",	0, 1, 2, true },
	{ "batch ends on event idx",	0, 3, 3, false },
	{ "batch covers event",		0, 3, 4, true },
	{ "batch steps over event",	0, 2, 8, true },
	{ "event at start",		5, 5, 1, true },
	{ "event just behind",		5, 4, 1, false },
	{ "event far behind",		0x10, 0xfff0, 8, false },
	{ "event far ahead",		0x10, 0x8000, 8, false },
	{ "before the wrap",		0xfffe, 0xffff, 1, false },
	{ "on the wrap",		0xfffe, 0xffff, 2, true },
	{ "last before wrap",		0xffff, 0xffff, 1, true },
	{ "across the wrap to 0",	0xfffe, 0, 3, true },
	{ "across the wrap, short",	0xfffe, 1, 3, false },
	{ "across the wrap to 1",	0xfffe, 1, 4, true },
	{ "long batch over the wrap",	0xfff0, 0xfff8, 0x20, true },
	{ "long batch, event after",	0xfff0, 0x10, 0x20, false },
};

START_TEST(test_event_idx_decision)
{
	virtq__set_event_idx(&vq, true);
	advance_used(event_cases[_i].start);
	*used_event() = event_cases[_i].event;
	ck_assert_msg(push_and_decide(event_cases[_i].n) == event_cases[_i].want,
		      "%s", event_cases[_i].what);
	ck_assert_uint_eq(used()->idx,
			  (uint16_t)(event_cases[_i].start + event_cases[_i].n));
}
END_TEST

/*
 * "Old" is where the previous decision left off, whatever it answered: a
 * batch split over two decisions is judged as a whole, and pushes already
 * judged are not judged again.
 */
START_TEST(test_event_idx_decisions_chain)
{
	virtq__set_event_idx(&vq, true);
	*used_event() = 4;
	ck_assert(!push_and_decide(4));		/* 0..3 used, not 4 yet */
	ck_assert(push_and_decide(2));		/* 4 and 5: 4 is in it */
	ck_assert(!push_and_decide(1));		/* 4 was reported */
	ck_assert(!push_and_decide(0));
	/* The driver re-arms at the next entry, 7. */
	*used_event() = 7;
	ck_assert(push_and_decide(3));		/* 7, 8, 9 */
	ck_assert_uint_eq(used()->idx, 10);
	/* Re-armed in the past (a driver that lost track): no interrupt. */
	*used_event() = 9;
	ck_assert(!push_and_decide(1));
	ck_assert(!push_and_decide(5));
	/* Until the ring comes round to 9 again. */
	advance_used(9);
	ck_assert(push_and_decide(1));
}
END_TEST

START_TEST(test_event_idx_ignores_no_interrupt)
{
	virtq__set_event_idx(&vq, true);
	avail()->flags = VRING_AVAIL_F_NO_INTERRUPT;
	*used_event() = 0;
	ck_assert(push_and_decide(1));
	avail()->flags = 0;
	*used_event() = 8;
	ck_assert(!push_and_decide(1));
}
END_TEST

/* A queue set up again starts its decisions from 0, with EVENT_IDX off. */
START_TEST(test_event_idx_after_reinit)
{
	struct virtq_mem m = { .translate = translate, .opaque = mem };

	virtq__set_event_idx(&vq, true);
	*used_event() = 0xffff;
	ck_assert(!push_and_decide(3));
	memset(mem, 0, MEM_SIZE);
	ck_assert_int_eq(virtq__init(&vq, &m, QSIZE, DESC_GPA, AVAIL_GPA,
				     USED_GPA), 0);
	ck_assert(!vq.event_idx);
	virtq__set_event_idx(&vq, true);
	/*
	 * One push from 0 does not reach 5; counted from a stale 3 it would
	 * look like a trip all the way round the index, past 5.
	 */
	*used_event() = 5;
	ck_assert(!push_and_decide(1));
	ck_assert(push_and_decide(5));		/* 1..5 */
	/* The first push after a reset interrupts a driver at used_event 0. */
	ck_assert_int_eq(virtq__init(&vq, &m, QSIZE, DESC_GPA, AVAIL_GPA,
				     USED_GPA), 0);
	virtq__set_event_idx(&vq, true);
	*used_event() = 0;
	ck_assert(push_and_decide(1));
}
END_TEST

/* Without EVENT_IDX the used ring's flags and avail_event stay the guest's. */
START_TEST(test_enable_notify_without_event_idx)
{
	*avail_event() = 0xbeef;
	used()->flags = 0;
	virtq__set_event_idx(&vq, false);
	virtq__enable_notify(&vq);
	ck_assert_uint_eq(*avail_event(), 0xbeef);
	set_desc(0, DATA_GPA, 16, 0, 0);
	offer(0);
	ck_assert_int_eq(virtq__pop(&vq, &chain), 1);
	virtq__push(&vq, 0, 0);
	(void)virtq__needs_interrupt(&vq);
	virtq__enable_notify(&vq);
	ck_assert_uint_eq(*avail_event(), 0xbeef);
	ck_assert_uint_eq(used()->flags, 0);
}
END_TEST

START_TEST(test_enable_notify)
{
	unsigned int i;

	*avail_event() = 0xbeef;
	virtq__set_event_idx(&vq, true);
	ck_assert_uint_eq(*avail_event(), 0);	/* published at once */
	set_desc(0, DATA_GPA, 16, 0, 0);
	for (i = 0; i < 3; i++)
		offer(0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(virtq__pop(&vq, &chain), 1);
	/* Popping alone does not re-arm: no notifications while serving. */
	ck_assert_uint_eq(*avail_event(), 0);
	ck_assert_int_eq(virtq__pop(&vq, &chain), 0);
	virtq__enable_notify(&vq);
	ck_assert_uint_eq(*avail_event(), 3);	/* the next entry we take */
	ck_assert_uint_eq(used()->flags, 0);	/* NO_NOTIFY never set */
	/* The caller's re-check sees what came in meanwhile. */
	ck_assert_uint_eq(virtq__pending(&vq), 0);
	offer(0);
	ck_assert_uint_eq(virtq__pending(&vq), 1);
	ck_assert_int_eq(virtq__pop(&vq, &chain), 1);
	virtq__enable_notify(&vq);
	ck_assert_uint_eq(*avail_event(), 4);
}
END_TEST

START_TEST(test_enable_notify_wraps)
{
	set_desc(0, DATA_GPA, 16, 0, 0);
	vq.last_avail = 0xfffe;
	avail()->idx = 0xfffe;
	virtq__set_event_idx(&vq, true);
	ck_assert_uint_eq(*avail_event(), 0xfffe);
	offer(0);
	ck_assert_int_eq(virtq__pop(&vq, &chain), 1);
	virtq__enable_notify(&vq);
	ck_assert_uint_eq(*avail_event(), 0xffff);
	offer(0);
	offer(0);
	ck_assert_int_eq(virtq__pop(&vq, &chain), 1);
	ck_assert_int_eq(virtq__pop(&vq, &chain), 1);
	virtq__enable_notify(&vq);
	ck_assert_uint_eq(*avail_event(), 1);
}
END_TEST

/* A descriptor rewritten after the pop does not change the chain. */
START_TEST(test_chain_is_a_copy)
{
	set_desc(0, DATA_GPA, 16, 0, 0);
	offer(0);
	ck_assert_int_eq(virtq__pop(&vq, &chain), 1);
	set_desc(0, MEM_SIZE * 2, 0xffff, 0, 0);
	ck_assert_ptr_eq(bufs[0].addr, mem + DATA_GPA);
	ck_assert_uint_eq(bufs[0].len, 16);
}
END_TEST

static Suite *virtq_suite(void)
{
	Suite *s = suite_create("virtq");
	TCase *tc;

	tc = tcase_create("init");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_init_ok);
	tcase_add_loop_test(tc, test_init_rejects, 0,
			    sizeof(bad_init) / sizeof(bad_init[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("walk");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_pop_chain);
	tcase_add_test(tc, test_pop_full_length_chain);
	tcase_add_test(tc, test_pop_loop);
	tcase_add_test(tc, test_pop_self_loop);
	tcase_add_loop_test(tc, test_pop_bad_desc, 0,
			    sizeof(bad_desc) / sizeof(bad_desc[0]));
	tcase_add_test(tc, test_pop_readable_after_writable);
	tcase_add_test(tc, test_pop_zero_length);
	tcase_add_test(tc, test_pop_head_out_of_range);
	tcase_add_test(tc, test_chain_is_a_copy);
	suite_add_tcase(s, tc);

	tc = tcase_create("indexes");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_avail_too_far_ahead);
	tcase_add_test(tc, test_avail_index_wraps);
	tcase_add_test(tc, test_push);
	tcase_add_test(tc, test_needs_interrupt);
	suite_add_tcase(s, tc);

	tc = tcase_create("event_idx");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_event_idx_off_after_init);
	tcase_add_loop_test(tc, test_event_idx_decision, 0,
			    sizeof(event_cases) / sizeof(event_cases[0]));
	tcase_add_test(tc, test_event_idx_decisions_chain);
	tcase_add_test(tc, test_event_idx_ignores_no_interrupt);
	tcase_add_test(tc, test_event_idx_after_reinit);
	tcase_add_test(tc, test_enable_notify_without_event_idx);
	tcase_add_test(tc, test_enable_notify);
	tcase_add_test(tc, test_enable_notify_wraps);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(virtq_suite());
}
