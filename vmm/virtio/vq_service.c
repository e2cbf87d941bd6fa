// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ownership word: OWNED while a thread serves the queue, AGAIN when
 * something happened that the owner has not looked at yet, HOLD while a
 * control path wants the queue.  The owner clears AGAIN before each pass
 * and lets go only with a compare-and-swap that sees AGAIN clear, so an
 * event set before that swap is served by the owner and one set after it
 * finds the queue free: nothing is lost in between.  A control path waits
 * on the word itself (a futex): the owner wakes it when it lets go.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/futex.h>

#include "log.h"
#include "thread.h"
#include "virtio/vq_service.h"

#define VQS_RUN_OWNED	(1u << 0)
#define VQS_RUN_AGAIN	(1u << 1)
#define VQS_RUN_HOLD	(1u << 2)

static void futex_wait(_Atomic uint32_t *word, uint32_t val)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake_all(_Atomic uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Takes the queue if nobody owns or holds it. */
static bool try_own(struct vq_service *s, uint32_t cur)
{
	while (!(cur & (VQS_RUN_OWNED | VQS_RUN_HOLD)))
		if (atomic_compare_exchange_weak(&s->run, &cur,
						 cur | VQS_RUN_OWNED))
			return true;
	return false;
}

/*
 * The owner's loop: a pass while AGAIN is set, then let go.  A vCPU hands
 * what is left to the thread after VQS_VCPU_PASSES; a holder waiting for
 * the queue gets it after the pass under way.
 */
static void serve(struct vq_service *s, unsigned int flags)
{
	uint32_t cur = atomic_load(&s->run);
	unsigned int passes = 0;
	bool hand_over = false;

	for (;;) {
		if ((cur & VQS_RUN_AGAIN) && !(cur & VQS_RUN_HOLD) &&
		    !hand_over) {
			if (!(flags & VQS_THREAD) && passes == VQS_VCPU_PASSES) {
				hand_over = true;
				continue;
			}
			if (!atomic_compare_exchange_weak(&s->run, &cur,
							  cur & ~VQS_RUN_AGAIN))
				continue;
			if (s->ops->pass(s->opaque, s->q, flags))
				atomic_fetch_or(&s->run, VQS_RUN_AGAIN);
			flags &= ~VQS_TIMEOUT;
			passes++;
			cur = atomic_load(&s->run);
			continue;
		}
		if (atomic_compare_exchange_weak(&s->run, &cur,
						 cur & ~VQS_RUN_OWNED))
			break;
	}
	if (cur & VQS_RUN_HOLD)
		futex_wake_all(&s->run);
	if (hand_over)
		vq_service__wake(s);
}

void vq_service__kick(struct vq_service *s, unsigned int flags)
{
	uint32_t cur = atomic_fetch_or(&s->run, VQS_RUN_AGAIN) | VQS_RUN_AGAIN;

	if (try_own(s, cur))
		serve(s, flags);
}

void vq_service__hold(struct vq_service *s)
{
	uint32_t cur;

	pthread_mutex_lock(&s->hold_lock);
	cur = atomic_fetch_or(&s->run, VQS_RUN_HOLD) | VQS_RUN_HOLD;
	for (;;) {
		if (!(cur & VQS_RUN_OWNED)) {
			if (atomic_compare_exchange_weak(&s->run, &cur,
							 cur | VQS_RUN_OWNED))
				return;
			continue;
		}
		futex_wait(&s->run, cur);
		cur = atomic_load(&s->run);
	}
}

void vq_service__unhold(struct vq_service *s, unsigned int flags)
{
	atomic_fetch_and(&s->run, ~VQS_RUN_HOLD);
	pthread_mutex_unlock(&s->hold_lock);
	/* still the owner: what was kicked while we held the queue */
	serve(s, flags);
}

void vq_service__wake(struct vq_service *s)
{
	eventfd_write(s->wake_fd, 1);
}

void vq_service__timer_changed(struct vq_service *s, unsigned int flags)
{
	/* the thread asks sleep_us() again when its own pass returns */
	if (!(flags & VQS_THREAD))
		vq_service__wake(s);
}

static void drain(int fd)
{
	eventfd_t v;

	while (eventfd_read(fd, &v) == 0)
		;
}

static struct timespec *timeout_of(long us, struct timespec *ts)
{
	if (us < 0)
		return NULL;
	ts->tv_sec = us / 1000000;
	ts->tv_nsec = (us % 1000000) * 1000;
	return ts;
}

static void *service_thread(void *arg)
{
	struct vq_service *s = arg;
	struct pollfd pfd[VQS_MAX_FDS + 1];
	unsigned int i, n = 0;

	pthread_setname_np(pthread_self(), s->name);
	pfd[n++] = (struct pollfd) { .fd = s->wake_fd, .events = POLLIN };
	for (i = 0; i < s->nfds; i++)
		pfd[n++] = (struct pollfd) { .fd = s->fds[i], .events = POLLIN };
	while (!atomic_load(&s->stop)) {
		struct timespec ts;
		unsigned int flags = VQS_THREAD;
		int ret;

		ret = ppoll(pfd, n, timeout_of(s->ops->sleep_us(s->opaque, s->q),
					       &ts), NULL);
		if (ret < 0 && errno != EINTR) {
			pr_err("%s: ppoll: %s", s->name,
				strerror(errno));
			break;
		}
		if (ret == 0)
			flags |= VQS_TIMEOUT;
		/* Drained first: what happens from here on wakes us again. */
		for (i = 0; ret > 0 && i < n; i++)
			if (pfd[i].revents)
				drain(pfd[i].fd);
		if (atomic_load(&s->stop))
			break;
		vq_service__kick(s, flags);
	}
	return NULL;
}

int vq_service__init(struct vq_service *s, const struct vq_service_ops *ops,
		     void *opaque, unsigned int q, const char *name)
{
	memset(s, 0, sizeof(*s));
	s->ops = ops;
	s->opaque = opaque;
	s->q = q;
	snprintf(s->name, sizeof(s->name), "%s", name);
	pthread_mutex_init(&s->hold_lock, NULL);
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return s->wake_fd < 0 ? -errno : 0;
}

int vq_service__watch(struct vq_service *s, int fd)
{
	if (fd < 0 || s->nfds == VQS_MAX_FDS || s->thread_ok)
		return -EINVAL;
	s->fds[s->nfds++] = fd;
	return 0;
}

int vq_service__start(struct vq_service *s)
{
	int ret = thread__start(&s->thread, service_thread, s,
				THREAD_STACK_QUEUE);

	s->thread_ok = !ret;
	return ret;
}

void vq_service__exit(struct vq_service *s)
{
	if (!s->ops)
		return;		/* never initialised */
	if (s->thread_ok) {
		atomic_store(&s->stop, true);
		vq_service__wake(s);
		pthread_join(s->thread, NULL);
		s->thread_ok = false;
	}
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	s->wake_fd = -1;
	pthread_mutex_destroy(&s->hold_lock);
	s->ops = NULL;
}
