// SPDX-License-Identifier: GPL-2.0-only
/*
 * The --churn side thread, a benchmark aid: vm__start() starts it before
 * the vCPUs, vm__join() joins it after them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "log.h"
#include "vm.h"
#include "vm_churn.h"

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
	struct vm *vm = arg;
	size_t len = (size_t)vm->churn_kib << 10, off;
	struct timespec next;
	uint64_t n = 0;

	pthread_setname_np(pthread_self(), "churn");
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!vm__stopping(vm)) {
		uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			break;
		for (off = 0; off < len; off += 4096)
			p[off] = 1;
		munmap(p, len);
		n++;
		if (vm->churn_hz)
			churn_pace(&next, vm->churn_hz);
	}
	__atomic_store_n(&vm->churn_cycles, n, __ATOMIC_RELEASE);
	return NULL;
}

int vm_churn__start(struct vm *vm)
{
	int ret;

	if (!vm->churn_kib)
		return 0;
	ret = -pthread_create(&vm->churn_thread, NULL, churn_thread, vm);
	if (ret) {
		pr_err("starting the churn thread: %s", strerror(-ret));
		return ret;
	}
	vm->churn_running = true;
	if (vm->churn_hz)
		pr_info("churn: mmap/munmap of %u KiB "
			"%u times a second (benchmark aid)",
			vm->churn_kib, vm->churn_hz);
	else
		pr_info("churn: mmap/munmap of %u KiB "
			"in a loop (benchmark aid)", vm->churn_kib);
	return 0;
}

void vm_churn__join(struct vm *vm)
{
	if (!vm->churn_running)
		return;
	pthread_join(vm->churn_thread, NULL);
	vm->churn_running = false;
	pr_info("churn: %llu mmap/munmap cycles",
		(unsigned long long)vm->churn_cycles);
}
