// SPDX-License-Identifier: GPL-2.0-only
/*
 * The split-ring accessor on crafted rings in plain memory: what a driver
 * does right, and each way a hostile one can break the ring.
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
	return s;
}

int main(void)
{
	return unit_run(virtq_suite());
}
