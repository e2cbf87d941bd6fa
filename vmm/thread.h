/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Every thread gpin-vmm starts, with a stack sized on purpose instead of
 * glibc's default (8 MiB reserved each: the RLIMIT_STACK of the shell
 * that started the VMM).  The sizes are what the deepest path of each
 * thread needs with room to spare; only the pages a thread touches
 * become resident, so the size bounds address space, not RSS.
 */
#ifndef GPIN_THREAD_H
#define GPIN_THREAD_H

#include <pthread.h>
#include <stddef.h>

/*
 * A vCPU runs KVM_RUN's exits: device emulation, and with service=vcpu a whole
 * virtio-blk pass (no large locals: chains and slots live in the queue);
 * a queue's thread runs the same passes.  The message formatting in
 * log.c (a 1 KiB line) is the largest frame on either.
 */
#define THREAD_STACK_VCPU	(256 << 10)
#define THREAD_STACK_QUEUE	(256 << 10)
/*
 * libmicrohttpd's thread for --api-socket: HTTP, json-c and vm.boot
 * (which loads the images into guest RAM with memcpy, no recursion).
 */
#define THREAD_STACK_API	(256 << 10)
/* The console's writer and the churn aid: a loop around one system call. */
#define THREAD_STACK_SMALL	(64 << 10)

/* pthread_create() with a @stack-byte stack; 0 or -errno. */
static inline int thread__start(pthread_t *t, void *(*fn)(void *), void *arg,
				size_t stack)
{
	pthread_attr_t attr;
	int ret = pthread_attr_init(&attr);

	if (ret)
		return -ret;
	ret = pthread_attr_setstacksize(&attr, stack);
	if (!ret)
		ret = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return -ret;
}

#endif /* GPIN_THREAD_H */
