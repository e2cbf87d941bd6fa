// SPDX-License-Identifier: GPL-2.0-only
/*
 * The --churn side thread, a benchmark aid: vm__start() starts it before
 * the vCPUs, vm__join() joins it after them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "log.h"
#include "thread.h"
#include "vm.h"
#include "vm_churn.h"

struct vm_churn {
	struct vm *vm;			/* runs until it stops */
	unsigned int kib;
	unsigned int hz;		/* cycles per second, 0: flat out */
	pthread_t thread;
	bool running;
	uint64_t cycles;		/* written by the thread as it ends */
};

/*
 * --churn: map, touch and unmap a small region until the VM stops.  Each
 * mmap and munmap takes mmap_lock for writing, as memory hot-plug or a
 * malloc arena would: the locked pinning path waits for it, the fast
 * path does not.  At a fixed rate the writer is the same load beside every
 * pin mode (a late cycle starts at once, missed ones are not made up).
 */
static void churn_pace(struct timespec *next, unsigned int hz)
{
	struct timespec now;
	long period = 1000000000L / hz;

	next->tv_nsec += period;
	if (next->tv_nsec >= 1000000000L) {
		next->tv_sec++;
		next->tv_nsec -= 1000000000L;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec > next->tv_sec ||
	    (now.tv_sec == next->tv_sec && now.tv_nsec > next->tv_nsec)) {
		*next = now;		/* behind: no burst to catch up */
		return;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL) ==
	       EINTR)
		;
}

static void *churn_thread(void *arg)
{
	struct vm_churn *churn = arg;
	size_t len = (size_t)churn->kib << 10, off;
	struct timespec next;
	uint64_t n = 0;

	pthread_setname_np(pthread_self(), "churn");
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!vm_run__stopping(&churn->vm->run)) {
		uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			break;
		for (off = 0; off < len; off += 4096)
			p[off] = 1;
		munmap(p, len);
		n++;
		if (churn->hz)
			churn_pace(&next, churn->hz);
	}
	__atomic_store_n(&churn->cycles, n, __ATOMIC_RELEASE);
	return NULL;
}

struct vm_churn *vm_churn__create(struct vm *vm, unsigned int kib,
				  unsigned int hz)
{
	struct vm_churn *churn = calloc(1, sizeof(*churn));

	if (churn)
		*churn = (struct vm_churn) { .vm = vm, .kib = kib, .hz = hz };
	return churn;
}

int vm_churn__start(struct vm_churn *churn)
{
	int ret;

	if (!churn)
		return 0;
	ret = thread__start(&churn->thread, churn_thread, churn,
			   THREAD_STACK_SMALL);
	if (ret)
		return ret;
	churn->running = true;
	if (churn->hz)
		pr_info("churn: mmap/munmap of %u KiB %u times a second "
			"(benchmark aid)", churn->kib, churn->hz);
	else
		pr_info("churn: mmap/munmap of %u KiB in a loop "
			"(benchmark aid)", churn->kib);
	return 0;
}

void vm_churn__join(struct vm_churn *churn)
{
	if (!churn || !churn->running)
		return;
	pthread_join(churn->thread, NULL);
	churn->running = false;
	pr_info("churn: %llu mmap/munmap cycles",
		(unsigned long long)churn->cycles);
}

void vm_churn__destroy(struct vm_churn *churn)
{
	free(churn);
}
