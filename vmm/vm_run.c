// SPDX-License-Identifier: GPL-2.0-only
/* Whether a VM runs: vm_run.h. */
#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <linux/kvm.h>

#include "log.h"
#include "vm_run.h"

int vm_run__init(struct vm_run *r, void (*kick_all)(void *opaque),
		 void *opaque)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->kick_all = kick_all;
	r->opaque = opaque;
	r->stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return r->stop_efd < 0 ? -errno : 0;
}

void vm_run__exit(struct vm_run *r)
{
	if (r->stop_efd >= 0)
		close(r->stop_efd);
	r->stop_efd = -1;
}

bool vm_run__stopping(const struct vm_run *r)
{
	return __atomic_load_n(&r->reason, __ATOMIC_ACQUIRE) != VM_STOP_NONE;
}

void vm_run__request_stop(struct vm_run *r, enum vm_stop_reason reason,
			  int code)
{
	bool first = false;

	pthread_mutex_lock(&r->lock);
	if (r->reason == VM_STOP_NONE) {
		r->exit_code = code;
		__atomic_store_n(&r->reason, reason, __ATOMIC_RELEASE);
		first = true;
		/* Parked vCPUs and a waiting vm_run__pause() must see it too. */
		pthread_cond_broadcast(&r->cond);
	}
	pthread_mutex_unlock(&r->lock);
	if (!first)
		return;
	if (r->stop_efd >= 0 && eventfd_write(r->stop_efd, 1))
		pr_err("eventfd_write: %s", strerror(errno));
	r->kick_all(r->opaque);
}

int vm_run__pause(struct vm_run *r, unsigned int nvcpus)
{
	int ret = 0;

	pthread_mutex_lock(&r->lock);
	if (r->reason != VM_STOP_NONE)
		ret = -ESRCH;
	else if (r->paused)
		ret = -EALREADY;
	else
		__atomic_store_n(&r->paused, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&r->lock);
	if (ret)
		return ret;
	r->kick_all(r->opaque);
	pthread_mutex_lock(&r->lock);
	while (r->nparked < nvcpus && r->reason == VM_STOP_NONE)
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
	return 0;
}

int vm_run__resume(struct vm_run *r)
{
	int ret = 0;

	pthread_mutex_lock(&r->lock);
	if (!r->paused)
		ret = -EINVAL;
	__atomic_store_n(&r->paused, false, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return ret;
}

/*
 * Only reached when a vCPU saw the pause flag or came back from KVM_RUN
 * with EINTR: the lock stays off the path of ordinary exits, which every
 * vCPU takes thousands of times a second.
 */
void vm_run__park_if_paused(struct vm_run *r, struct kvm_run *run)
{
	pthread_mutex_lock(&r->lock);
	if (r->paused && r->reason == VM_STOP_NONE) {
		r->nparked++;
		pthread_cond_broadcast(&r->cond);
		while (r->paused && r->reason == VM_STOP_NONE)
			pthread_cond_wait(&r->cond, &r->lock);
		r->nparked--;
	}
	/*
	 * The pause kick left immediate_exit set; clear it under the lock, so
	 * a later pause (which sets the flag before kicking) cannot lose its
	 * kick.  A stop keeps it set: that vCPU is done.
	 */
	if (r->reason == VM_STOP_NONE)
		__atomic_store_n(&run->immediate_exit, 0, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&r->lock);
}

int vm_run__exit_status(const struct vm_run *r)
{
	switch (r->reason) {
	case VM_STOP_POWEROFF:
	case VM_STOP_RESET:
		return 0;
	case VM_STOP_EXIT_DEVICE:
		return r->exit_code;
	case VM_STOP_PANIC:
		return 3;
	case VM_STOP_SIGNAL:
		return 128 + r->exit_code;
	case VM_STOP_NONE:
	case VM_STOP_ERROR:
		break;
	}
	return 1;
}
