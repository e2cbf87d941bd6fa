// SPDX-License-Identifier: GPL-2.0-only
/*
 * Who serves a queue (virtio/vq_service.c) and the notifications around
 * it: the ownership word under threads that all kick at once, holds that
 * really keep passes out, and the whole device under a driver that
 * notifies only when the device asks it to, over a backend that
 * completes on its own thread after a random delay - a lost wake-up
 * anywhere shows as a request that never completes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_mmio.h>

#include "blk_driver.h"
#include "devices/blk_backend.h"
#include "fake_disk.h"
#include "unit.h"
#include "virtio/vq_service.h"

/* ---- the ownership word --------------------------------------------- */

#define KICKERS		4
#define KICKS		20000

static struct vq_service svc;
static _Atomic unsigned long events, served;
static _Atomic int in_pass, held;

static bool count_pass(void *opaque, unsigned int q, unsigned int flags)
{
	ck_assert_int_eq(atomic_exchange(&in_pass, 1), 0);	/* alone */
	ck_assert_int_eq(atomic_load(&held), 0);		/* not held */
	served += atomic_exchange(&events, 0);
	atomic_store(&in_pass, 0);
	return false;
}

static long never(void *opaque, unsigned int q)
{
	return -1;
}

static const struct vq_service_ops count_ops = {
	.pass = count_pass,
	.sleep_us = never,
};

/* Half of them kick as vCPUs do (they hand over), half as threads. */
static void *kicker(void *arg)
{
	unsigned int flags = (uintptr_t)arg & 1 ? VQS_THREAD : 0;
	unsigned int i;

	for (i = 0; i < KICKS; i++) {
		atomic_fetch_add(&events, 1);
		vq_service__kick(&svc, flags);
	}
	return NULL;
}

static void *holder(void *arg)
{
	struct timespec ts = { 0, 20000 };
	unsigned int i;

	for (i = 0; i < 200; i++) {
		vq_service__hold(&svc);
		atomic_store(&held, 1);
		ck_assert_int_eq(atomic_load(&in_pass), 0);
		nanosleep(&ts, NULL);
		atomic_store(&held, 0);
		vq_service__unhold(&svc, 0);
	}
	return NULL;
}

/* Every event is served by some pass, passes never overlap or run held. */
START_TEST(test_service_nothing_lost)
{
	pthread_t t[KICKERS + 1];
	struct timespec ts = { 0, 1000000 };
	uintptr_t i;
	int waited;

	events = served = 0;
	ck_assert_int_eq(vq_service__init(&svc, &count_ops, NULL, 0, "test-q0"),
			 0);
	ck_assert_int_eq(vq_service__start(&svc), 0);
	for (i = 0; i < KICKERS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, kicker, (void *)i), 0);
	ck_assert_int_eq(pthread_create(&t[KICKERS], NULL, holder, NULL), 0);
	for (i = 0; i <= KICKERS; i++)
		pthread_join(t[i], NULL);
	/* what the vCPU-style kickers handed over, the thread serves */
	for (waited = 0; served != KICKERS * KICKS && waited < 5000; waited++)
		nanosleep(&ts, NULL);
	ck_assert_uint_eq(served, KICKERS * KICKS);
	vq_service__exit(&svc);
}
END_TEST

/* ---- the device under a driver that trusts its notification requests --- */

#define DEPTH		(QS / 2)	/* two descriptors a request */
#define REQUESTS	5000

/* The disk completes each request 0-400 us later. */
static const struct fake_disk_opts slow_disk = { .max_delay_us = 400,
						 .fill = -1 };

/*
 * At depth 1 the driver publishes just as the device goes idle (the race
 * of the last look); at full depth completions drive the queue.
 */
static const struct {
	const char *what;
	bool event_idx, iothread;
	unsigned int depth;
	long poll_us;
} modes[] = {
	{ "service=vcpu, EVENT_IDX, depth 1", true, false, 1, 0 },
	{ "service=vcpu, no EVENT_IDX, depth 1", false, false, 1, 0 },
	{ "service=iothread, EVENT_IDX, depth 1", true, true, 1, 0 },
	{ "service=iothread, no EVENT_IDX, depth 1", false, true, 1, 0 },
	{ "service=vcpu, EVENT_IDX", true, false, DEPTH, 0 },
	{ "service=vcpu, no EVENT_IDX", false, false, DEPTH, 0 },
	{ "service=iothread, EVENT_IDX", true, true, DEPTH, 0 },
	{ "service=iothread, no EVENT_IDX", false, true, DEPTH, 0 },
	{ "service=vcpu, EVENT_IDX, depth 1, poll=50", true, false, 1, 50 },
	{ "service=vcpu, no EVENT_IDX, poll=50", false, false, DEPTH, 50 },
	{ "service=iothread, EVENT_IDX, depth 1, poll=50", true, true, 1, 50 },
};

/* The driver's side of section 2.7.13: does the device want a notify? */
static bool device_wants_notify(bool event_idx, uint16_t old, uint16_t new)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (event_idx)
		return vring_need_event(__atomic_load_n(gavail_event(),
							__ATOMIC_RELAXED),
					new, old);
	return !(__atomic_load_n(&gused()->flags, __ATOMIC_RELAXED) &
		 VRING_USED_F_NO_NOTIFY);
}

static void notify(bool iothread)
{
	if (iothread)
		eventfd_write(virtio_blk__kick_fd(blk, 0), 1);
	else
		wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
}

/* Makes request @slot (descriptors 2 slot, 2 slot + 1) a FLUSH. */
static void write_flush(unsigned int slot)
{
	uint64_t hdr = HDR + 16 * slot;
	struct virtio_blk_outhdr h = { .type = VIRTIO_BLK_T_FLUSH };

	memcpy(gmem + hdr, &h, sizeof(h));
	gmem[STATUS + slot] = 0xff;
	*gdesc(2 * slot) = (struct vring_desc) { hdr, 16, VRING_DESC_F_NEXT,
						 2 * slot + 1 };
	*gdesc(2 * slot + 1) = (struct vring_desc) { STATUS + slot, 1,
						     VRING_DESC_F_WRITE, 0 };
}

/* Publishes the free slots below @depth, then asks once whether to notify. */
static unsigned int publish(bool *busy, unsigned int depth, unsigned int left,
			    bool event_idx, bool iothread)
{
	struct vring_avail *a = (struct vring_avail *)(gmem + AVAIL);
	uint16_t old = avail_idx;
	unsigned int slot, n = 0;

	for (slot = 0; slot < depth && n < left; slot++) {
		if (busy[slot])
			continue;
		busy[slot] = true;
		write_flush(slot);
		a->ring[(uint16_t)(old + n) % QS] = 2 * slot;
		n++;
	}
	if (!n)
		return 0;
	avail_idx = old + n;
	__atomic_store_n(&a->idx, avail_idx, __ATOMIC_RELEASE);
	if (device_wants_notify(event_idx, old, avail_idx))
		notify(iothread);
	return n;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Takes what the device used since @last_used; returns how many. */
static unsigned int take_used(bool *busy, uint16_t *last_used)
{
	unsigned int n = 0;

	while (*last_used != __atomic_load_n(&gused()->idx, __ATOMIC_ACQUIRE)) {
		uint32_t head = gused()->ring[(*last_used)++ % QS].id;

		ck_assert_uint_eq(head % 2, 0);
		ck_assert(busy[head / 2]);
		ck_assert_uint_eq(gmem[STATUS + head / 2], 0);
		busy[head / 2] = false;
		n++;
	}
	return n;
}

/*
 * REQUESTS flushes, up to a mode's depth at a time, each published slot by
 * slot as the previous ones complete; the driver polls the used ring (no
 * interrupts needed) and notifies only as the device asks.  Within 30 s
 * every one completes, or a wake-up was lost.
 */
static unsigned int run_driver(unsigned int depth, bool event_idx,
			       bool iothread, unsigned int requests,
			       unsigned int seconds)
{
	bool busy[DEPTH] = { false };
	unsigned int submitted = 0, completed = 0;
	uint16_t last_used = 0;
	time_t end = time(NULL) + seconds;

	driver_init();
	while (completed < requests && time(NULL) < end) {
		unsigned int n = publish(busy, depth, requests - submitted,
					 event_idx, iothread);

		submitted += n;
		completed += take_used(busy, &last_used);
		if (!n)
			sched_yield();
	}
	return completed;
}

START_TEST(test_no_lost_wakeup)
{
	struct virtio_blk_params p = {
		.nqueues = 1, .backend = &fake_disk_ops,
		.no_event_idx = !modes[_i].event_idx,
		.iothread = modes[_i].iothread,
		.poll_us = modes[_i].poll_us,
	};
	unsigned int completed;

	dev_setup_bare();
	fake_disk__set(&slow_disk);
	make_device_with(&p);
	completed = run_driver(modes[_i].depth, modes[_i].event_idx,
			       modes[_i].iothread, REQUESTS, 30);
	ck_assert_msg(completed == REQUESTS, "%s: %u of %u completed",
		      modes[_i].what, completed, REQUESTS);
	dev_teardown();
}
END_TEST

/*
 * How run_irq_driver() drives: its depth, whether EVENT_IDX was
 * negotiated (the device offers it unless no_event_idx), service=iothread's
 * eventfd for notifications, and trickle: one request every 500 us.
 */
struct irq_run {
	unsigned int depth;
	bool event_idx, iothread, trickle;
};

/*
 * The driver as Linux's virtio_blk runs it: it looks at the used ring
 * only when the interrupt line rises, acknowledges it, and after draining
 * asks for the next interrupt (used_event, ignored without EVENT_IDX) and
 * looks once more.  An interrupt the device holds and then forgets stalls
 * it.  Returns the requests completed; *@irqs, the interrupts taken.
 */
static unsigned int run_irq_driver(const struct irq_run *r,
				   unsigned int requests,
				   unsigned int seconds, unsigned int *irqs)
{
	unsigned int depth = r->depth;
	bool event_idx = r->event_idx, iothread = r->iothread;
	bool busy[DEPTH] = { false };
	unsigned int submitted = 0, completed = 0;
	struct timespec ts = { .tv_nsec = 20000 };
	uint16_t last_used = 0;
	time_t end = time(NULL) + seconds;
	struct timespec last = { 0 };

	driver_init();
	while (completed < requests && time(NULL) < end) {
		/* trickle: one every 500 us, as a guest slower than the host */
		if (!r->trickle)
			submitted += publish(busy, depth, requests - submitted,
					     event_idx, iothread);
		else if (seconds_since(&last) >= 500e-6 &&
			 publish(busy, depth, requests > submitted, event_idx,
				 iothread)) {
			submitted++;
			clock_gettime(CLOCK_MONOTONIC, &last);
		}
		if (!__atomic_load_n(&irq_level, __ATOMIC_SEQ_CST)) {
			nanosleep(&ts, NULL);
			continue;
		}
		wr(VIRTIO_MMIO_INTERRUPT_ACK, rd(VIRTIO_MMIO_INTERRUPT_STATUS));
		do {
			completed += take_used(busy, &last_used);
			__atomic_store_n(gused_event(), last_used,
					 __ATOMIC_RELAXED);
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
		} while (last_used != __atomic_load_n(&gused()->idx,
						      __ATOMIC_ACQUIRE));
	}
	*irqs = __atomic_load_n(&irq_raises, __ATOMIC_SEQ_CST);
	return completed;
}

/*
 * irq_hold=: no interrupt is lost, whether the vCPU or the thread held
 * it; at depth the interrupts are fewer than the requests (the disk
 * finishes a batch within 400 us, far inside the hold, and the hold ends
 * at the first look that finds nothing in flight and nothing added); at
 * depth 1 the holds back off: of 300 requests, at most 20 are held (1,
 * 2, 4 ... 256 let through after each vain hold), and they take less
 * than 4 s, where the whole hold on each would take 30 s.
 */
START_TEST(test_irq_hold)
{
	bool iothread = _i & 1, deep = _i & 2;
	struct virtio_blk_params p = {
		.nqueues = 1, .backend = &fake_disk_ops, .iothread = iothread,
		.irq_hold_us = 100000,
	};
	struct irq_run r = { .depth = deep ? DEPTH : 1, .event_idx = true,
			     .iothread = iothread };
	unsigned int requests = deep ? REQUESTS : 300, completed, irqs;
	struct virtio_blk_queue_stats st;
	struct timespec t0;

	dev_setup_bare();
	fake_disk__set(&slow_disk);
	make_device_with(&p);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	completed = run_irq_driver(&r, requests, 30, &irqs);
	ck_assert_msg(completed == requests, "%u of %u completed",
		      completed, requests);
	virtio_blk__stats(blk, 0, &st);
	ck_assert_uint_eq(st.interrupts, irqs);
	if (deep) {
		ck_assert_msg(irqs * 3 <= completed, "%u interrupts for %u "
			      "requests at depth %u", irqs, completed, DEPTH);
	} else {
		ck_assert_msg(st.holds <= 20, "%llu of %u held at depth 1",
			      (unsigned long long)st.holds, completed);
		ck_assert_double_lt(seconds_since(&t0), 4.0);
	}
	dev_teardown();
}
END_TEST

/*
 * irq_hold= where it matters: a disk that completes at once and a driver
 * that adds one request every 500 us (up to DEPTH out) would otherwise see
 * each complete before it adds the next, and take an interrupt for each.
 * Held, the completions wait while the driver keeps adding and one
 * interrupt covers many.  With and without EVENT_IDX (the hold keeps
 * notifications off either way), on a vCPU and on the thread.
 */
START_TEST(test_irq_hold_trickle)
{
	const struct fake_disk_opts instant = { .fill = -1 };
	struct irq_run r = { .depth = DEPTH, .event_idx = !(_i & 2),
			     .iothread = _i & 1, .trickle = true };
	struct virtio_blk_params p = {
		.nqueues = 1, .backend = &fake_disk_ops,
		.iothread = r.iothread, .no_event_idx = !r.event_idx,
		.irq_hold_us = 100000,
	};
	struct virtio_blk_queue_stats st;
	unsigned int completed, irqs;

	dev_setup_bare();
	fake_disk__set(&instant);
	make_device_with(&p);
	completed = run_irq_driver(&r, 400, 30, &irqs);
	ck_assert_msg(completed == 400, "%u of 400 completed", completed);
	virtio_blk__stats(blk, 0, &st);
	ck_assert_uint_gt(st.holds, 0);
	ck_assert_msg(irqs * 3 <= completed, "%u interrupts for %u requests "
		      "added one at a time", irqs, completed);
	dev_teardown();
}
END_TEST

/*
 * A request stuck at the disk does not keep a hold: with one of two stuck,
 * the other's completion is in the used ring at once, and its interrupt
 * comes at the first look that finds the guest added nothing (a quarter
 * of irq_hold=, 1 s, with no gap between chains known yet): not never,
 * not at the bound, and not when the stuck one finishes.
 */
START_TEST(test_irq_hold_not_kept_by_a_stuck_request)
{
	const struct fake_disk_opts stuck = { .fill = -1, .hold = true };
	struct virtio_blk_params p = {
		.nqueues = 1, .backend = &fake_disk_ops, .iothread = _i,
		.irq_hold_us = 1000000,
	};
	bool busy[DEPTH] = { false };
	struct timespec t0;
	unsigned int i;

	dev_setup_bare();
	fake_disk__set(&stuck);
	make_device_with(&p);
	driver_init();
	ck_assert_uint_eq(publish(busy, 2, 2, true, _i), 2);
	for (i = 0; i < 5000 && fake_disk__queued() < 2; i++)
		usleep(1000);
	ck_assert_uint_eq(fake_disk__queued(), 2);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fake_disk__release(1);
	for (i = 0; i < 5000 && !__atomic_load_n(&gused()->idx,
						   __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	ck_assert_uint_eq(gused()->idx, 1);
	ck_assert_int_eq(__atomic_load_n(&irq_level, __ATOMIC_SEQ_CST), 0);
	ck_assert_int_eq(wait_irq_level(), 1);
	ck_assert_double_ge(seconds_since(&t0), 0.2);
	ck_assert_double_lt(seconds_since(&t0), 0.9);
	ck_assert_uint_eq(fake_disk__queued(), 1);
	fake_disk__hold(false);
	dev_teardown();
}
END_TEST

/*
 * iops=200 (a burst of 20): 120 requests cannot complete in less than
 * half a second - a lower bound, which a loaded machine only makes
 * safer - and all of them do complete (the rate limit's timer wakes the
 * queue; the driver is not asked to notify in vain).
 */
START_TEST(test_iops_limit)
{
	struct virtio_blk_params p = {
		.nqueues = 1, .backend = &fake_disk_ops, .iops = 200,
		.iothread = _i,
	};
	struct timespec t0;
	unsigned int completed;

	dev_setup_bare();
	fake_disk__set(&slow_disk);
	make_device_with(&p);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	completed = run_driver(DEPTH, true, _i, 120, 30);
	ck_assert_uint_eq(completed, 120);
	ck_assert_double_ge(seconds_since(&t0), 0.49);
	dev_teardown();
}
END_TEST

static Suite *blk_service_suite(void)
{
	Suite *s = suite_create("blk_service");
	TCase *tc;

	tc = tcase_create("ownership");
	tcase_add_test(tc, test_service_nothing_lost);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);

	tc = tcase_create("wake-ups");
	tcase_add_loop_test(tc, test_no_lost_wakeup, 0,
			    sizeof(modes) / sizeof(modes[0]));
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);

	tc = tcase_create("moderation");
	tcase_add_loop_test(tc, test_irq_hold, 0, 4);
	tcase_add_loop_test(tc, test_irq_hold_not_kept_by_a_stuck_request, 0, 2);
	tcase_add_loop_test(tc, test_irq_hold_trickle, 0, 4);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);

	tc = tcase_create("limits");
	tcase_add_loop_test(tc, test_iops_limit, 0, 2);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(blk_service_suite());
}
