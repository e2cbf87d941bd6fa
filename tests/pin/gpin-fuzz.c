// SPDX-License-Identifier: GPL-2.0
/*
 * gpin-fuzz: random, structured sequences of every /dev/gpin command from
 * several threads, with fork, close (and reopen) of the files, and
 * munmap (and mmap again) of the buffers interleaved; run by
 * tests/pin/in-host.sh in the test host, which then unloads the module
 * and reads the kernel log.
 *
 *   gpin-fuzz SECONDS SEED DEVICE...
 *
 * DEVICE: block devices the direct I/O commands may read and write
 * (scratch devices: their contents are overwritten).  Each call's
 * arguments are drawn around what the module checks: sizes below, at and
 * above the struct's, zero and non-zero tails and reserved fields, every
 * flag bit, modes past the last, page counts at the limits, addresses in
 * mapped, unmapped, read-only and kernel memory, descriptors that are
 * closed, not files, or files of the wrong kind.
 *
 * It fails (exit 1) when a call returns an errno the UAPI does not name,
 * when the module still holds pages 20 s after every file was closed, or
 * when the kernel's FOLL_PIN counts do not balance again; it prints how
 * often each command ran and each errno came back.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gpin.h>

#define PAGE		4096UL
#define NFILES		4
#define NREGIONS	8
#define REGION_PAGES	64
#define NTHREADS	4
#define MAX_DEVICES	4

enum cmd { C_PIN, C_UNPIN, C_STATS, C_RESET, C_DIO, C_SUBMIT, C_REAP,
	   C_EVENTFD, C_BOGUS, C_COUNT };

static const char *const cmd_names[C_COUNT] = {
	"PIN", "UNPIN", "STATS", "STATS_RESET", "DIO", "DIO_SUBMIT",
	"DIO_REAP", "SET_EVENTFD", "bogus number",
};

/* The errnos include/gpin.h names, and what files and devices return. */
static const int known_errnos[] = {
	EINVAL, E2BIG, EOVERFLOW, EFAULT, ENOSPC, ENOMEM, EPERM, ENOENT,
	EBADF, EAGAIN, ENOTTY, EIO, EOPNOTSUPP, EINTR, EHWPOISON, ENXIO,
	EEXIST,
};

static atomic_int gfds[NFILES];		/* -1: closed */
/*
 * The buffers: NREGIONS slots of REGION_PAGES in one reservation, a
 * PROT_NONE guard page after each, so that a pin or a READ running past a
 * buffer (the module rightly allows one spanning several mappings) meets
 * the guard and never the fuzzer's own stacks or heap.
 */
static char *arena;
#define SLOT_PAGES	(REGION_PAGES + 1)
static int devices[MAX_DEVICES], ndevices;
static int efd;
static atomic_int stop;
static atomic_long calls[C_COUNT], ok[C_COUNT];
static atomic_long errnos[256];
static atomic_int unknown;
static atomic_uint handles[64];

static unsigned int rnd(unsigned int *seed, unsigned int n)
{
	return n ? rand_r(seed) % n : 0;
}

static unsigned int rnd32(unsigned int *seed)
{
	return (unsigned int)rand_r(seed);
}

static uint64_t rnd64(unsigned int *seed)
{
	return (uint64_t)rand_r(seed) << 33 ^ (uint64_t)rand_r(seed) << 11 ^
	       rand_r(seed);
}

/* A size field: mostly right, sometimes short, long, zero or absurd. */
static uint32_t pick_size(unsigned int *seed, uint32_t right)
{
	switch (rnd(seed, 16)) {
	case 0: return 0;
	case 1: return right - 8;
	case 2: return right + 8;
	case 3: return 1U << 20;
	default: return right;
	}
}

/* An address: a region (maybe unmapped now), its middle, junk, kernel. */
static uint64_t pick_addr(unsigned int *seed)
{
	char *r = arena + rnd(seed, NREGIONS) * SLOT_PAGES * PAGE;

	switch (rnd(seed, 10)) {
	case 0: return 0;
	case 1: return 0xffff888000000000ULL + rnd64(seed) % (1ULL << 30);
	case 2: return rnd64(seed) & ~(PAGE - 1);
	case 3: return (uintptr_t)r + rnd(seed, 4096);
	default: return (uintptr_t)r + rnd(seed, REGION_PAGES) * PAGE;
	}
}

static uint32_t pick_mode(unsigned int *seed)
{
	return rnd(seed, 8) ? rnd(seed, GPIN_MODE_COUNT) : rnd(seed, 1000);
}

/* Mostly the known ones (PIN's two, STATS' one), sometimes junk. */
static uint32_t pick_flags(unsigned int *seed)
{
	return rnd(seed, 4) ? rnd(seed, 4) : rnd32(seed);
}

static int pick_fd(unsigned int *seed)
{
	switch (rnd(seed, 8)) {
	case 0: return -1;
	case 1: return atomic_load(&gfds[rnd(seed, NFILES)]);
	case 2: return efd;
	default: return devices[rnd(seed, ndevices)];
	}
}

static void fill_dio(unsigned int *seed, struct gpin_dio *d,
		     struct iovec *iov, unsigned int niov)
{
	unsigned int i, n = 1 + rnd(seed, niov);

	for (i = 0; i < n; i++) {
		iov[i].iov_base = (void *)(uintptr_t)pick_addr(seed);
		iov[i].iov_len = rnd(seed, 4) ? (1 + rnd(seed, 4)) * PAGE :
						rnd64(seed) % (8 << 20);
	}
	*d = (struct gpin_dio){
		.size = pick_size(seed, sizeof(*d)),
		.flags = rnd(seed, 16) ? 0 : rnd32(seed),
		.fd = pick_fd(seed),
		.op = rnd(seed, 16) ? rnd(seed, 2) : rnd32(seed),
		.offset = rnd(seed, 8) ? rnd(seed, 2048) * PAGE : rnd64(seed),
		.iov = rnd(seed, 16) ? (uintptr_t)iov : pick_addr(seed),
		.nr_segs = rnd(seed, 16) ? n : rnd32(seed),
		.mode = pick_mode(seed),
		.user_data = rnd64(seed),
	};
	if (!rnd(seed, 32))
		d->reserved[0] = 1;
	if (!rnd(seed, 32))
		d->reserved0 = 1;
	/* registered memory: this file's handles, another file, no file */
	if (!rnd(seed, 8)) {
		d->flags |= GPIN_DIO_PINNED;
		d->mode = rnd(seed, 8) ? 0 : d->mode;
		d->pins_fd = rnd(seed, 2) ? pick_fd(seed) :
			      atomic_load(&gfds[rnd(seed, NFILES)]);
	} else if (!rnd(seed, 32)) {
		d->pins_fd = pick_fd(seed);
	}
}

static unsigned long one_call(unsigned int *seed, int fd, enum cmd c)
{
	union {
		struct gpin_pin pin;
		struct gpin_unpin unpin;
		struct gpin_stats stats;
		struct gpin_stats_reset reset;
		struct gpin_dio dio;
		struct gpin_dio_submit submit;
		struct gpin_dio_reap reap;
		struct gpin_set_eventfd efd;
		char raw[512];
	} a;
	static _Thread_local struct gpin_dio reqs[8];
	static _Thread_local struct iovec iov[8][4];
	/* a REAP with any nr may write GPIN_DIO_MAX_BATCH events */
	static _Thread_local struct gpin_dio_event ev[GPIN_DIO_MAX_BATCH];
	unsigned int i, n;

	memset(&a, 0, sizeof(a));
	switch (c) {
	case C_PIN:
		a.pin = (struct gpin_pin){
			.size = pick_size(seed, sizeof(a.pin)),
			.flags = pick_flags(seed),
			.start = pick_addr(seed),
			.npages = rnd(seed, 8) ? 1 + rnd(seed, REGION_PAGES) :
				  rnd64(seed) % (2ULL << 20),
			.pfns = rnd(seed, 8) ? 0 : pick_addr(seed),
			.mode = pick_mode(seed),
		};
		return ioctl(fd, GPIN_IOC_PIN, &a) ? 0 :
		       (atomic_store(&handles[rnd(seed, 64)], a.pin.handle),
			1);
	case C_UNPIN:
		a.unpin = (struct gpin_unpin){
			.size = pick_size(seed, sizeof(a.unpin)),
			.flags = rnd(seed, 16) ? 0 : 1,
			.handle = rnd(seed, 4) ?
				  atomic_load(&handles[rnd(seed, 64)]) :
				  rnd32(seed),
		};
		return !ioctl(fd, GPIN_IOC_UNPIN, &a);
	case C_STATS:
		a.stats.size = pick_size(seed, sizeof(a.stats));
		a.stats.flags = pick_flags(seed);
		return !ioctl(fd, GPIN_IOC_STATS, rnd(seed, 16) ? (void *)&a :
			      (void *)(uintptr_t)pick_addr(seed));
	case C_RESET:
		a.reset.size = pick_size(seed, sizeof(a.reset));
		a.reset.flags = pick_flags(seed);
		return !ioctl(fd, GPIN_IOC_STATS_RESET, &a);
	case C_DIO:
		fill_dio(seed, &a.dio, iov[0], 4);
		return ioctl(fd, GPIN_IOC_DIO, &a) >= 0;
	case C_SUBMIT:
		n = 1 + rnd(seed, 8);
		for (i = 0; i < n; i++)
			fill_dio(seed, &reqs[i], iov[i], 4);
		for (i = 1; i < n; i++)
			reqs[i].size = reqs[0].size;
		a.submit = (struct gpin_dio_submit){
			.size = pick_size(seed, sizeof(a.submit)),
			.nr = rnd(seed, 16) ? n : rnd32(seed),
			.reqs = rnd(seed, 16) ? (uintptr_t)reqs :
				pick_addr(seed),
		};
		return ioctl(fd, GPIN_IOC_DIO_SUBMIT, &a) > 0;
	case C_REAP:
		a.reap = (struct gpin_dio_reap){
			.size = pick_size(seed, sizeof(a.reap)),
			.flags = rnd(seed, 16) ? 0 : 1,
			.nr = rnd(seed, 16) ? 1 + rnd(seed, 64) : rnd32(seed),
			.events = rnd(seed, 16) ? (uintptr_t)ev :
				  pick_addr(seed),
		};
		return ioctl(fd, GPIN_IOC_DIO_REAP, &a) >= 0;
	case C_EVENTFD:
		a.efd = (struct gpin_set_eventfd){
			.size = pick_size(seed, sizeof(a.efd)),
			.fd = rnd(seed, 3) ? efd : rnd(seed, 2) ? -1 :
			      pick_fd(seed),
		};
		return !ioctl(fd, GPIN_IOC_SET_EVENTFD, &a);
	default:
		return !ioctl(fd, _IOC(rnd(seed, 4), rnd(seed, 2) ?
				       GPIN_IOC_TYPE : rnd(seed, 256),
				       rnd(seed, 256), rnd(seed, 1024)), &a);
	}
}

static void count_errno(int err)
{
	unsigned int i;

	atomic_fetch_add(&errnos[err & 255], 1);
	for (i = 0; i < sizeof(known_errnos) / sizeof(known_errnos[0]); i++)
		if (err == known_errnos[i])
			return;
	if (atomic_fetch_add(&unknown, 1) < 10)
		fprintf(stderr, "gpin-fuzz: unexpected errno %d (%s)\n", err,
			strerror(err));
}

static void *worker(void *arg)
{
	unsigned int seed = (uintptr_t)arg;

	while (!atomic_load(&stop)) {
		enum cmd c = rnd(&seed, C_COUNT);
		int fd = atomic_load(&gfds[rnd(&seed, NFILES)]);

		if (fd < 0)
			continue;
		atomic_fetch_add(&calls[c], 1);
		errno = 0;
		if (one_call(&seed, fd, c))
			atomic_fetch_add(&ok[c], 1);
		else
			count_errno(errno);
	}
	return NULL;
}

/* Slot @i mapped anew (@prot, populated) or, with PROT_NONE, reserved. */
static void map_slot(unsigned int i, int prot, int flags)
{
	char *want = arena + i * SLOT_PAGES * PAGE;
	char *p = mmap(want, REGION_PAGES * PAGE, prot,
		       MAP_PRIVATE | MAP_ANONYMOUS | flags |
		       (prot == PROT_NONE ? MAP_NORESERVE : MAP_POPULATE),
		       -1, 0);

	if (p == MAP_FAILED && errno == EEXIST)
		return;	/* something took the hole: leave it to the guard */
	if (p != want) {
		perror("gpin-fuzz: mmap");
		exit(1);
	}
}

/*
 * The main thread's share: close and reopen files, unmap and map regions
 * (read-only now and then), fork children that try the same commands
 * from another mm and exit with the files inherited.
 */
static void chaos(unsigned int *seed)
{
	int i = rnd(seed, NFILES), fd, status;
	char *p;
	pid_t pid;

	switch (rnd(seed, 4)) {
	case 0:
		fd = atomic_exchange(&gfds[i], -1);
		if (fd >= 0)
			close(fd);
		atomic_store(&gfds[i], open(GPIN_DEVICE_PATH, O_RDWR));
		break;
	case 1:
		/* pinned or under I/O, maybe: zapped all the same */
		i = rnd(seed, NREGIONS);
		p = arena + i * SLOT_PAGES * PAGE;
		if (rnd(seed, 2)) {
			munmap(p, REGION_PAGES * PAGE);
			map_slot(i, PROT_NONE, MAP_FIXED_NOREPLACE);
		}
		map_slot(i, rnd(seed, 4) ? PROT_READ | PROT_WRITE : PROT_READ,
			 MAP_FIXED);
		break;
	case 2:
		pid = fork();
		if (pid == 0) {
			unsigned int s = *seed + 1;
			int n;

			for (n = 0; n < 50; n++) {
				fd = atomic_load(&gfds[rnd(&s, NFILES)]);
				if (fd >= 0)
					one_call(&s, fd, rnd(&s, C_COUNT));
			}
			_exit(0);
		}
		if (pid > 0)
			waitpid(pid, &status, 0);
		break;
	default:
		usleep(1000);
	}
}

/* NR_FOLL_PIN_ACQUIRED - _RELEASED after folding the per-CPU counts. */
static long long pins_held(void)
{
	long long v, a = -1, r = -1;
	char name[64];
	FILE *f;
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);

	if (fd < 0 || write(fd, "1", 1) != 1)
		return -1;
	close(fd);
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", name, &v) == 2) {
		if (!strcmp(name, "nr_foll_pin_acquired"))
			a = v;
		else if (!strcmp(name, "nr_foll_pin_released"))
			r = v;
	}
	fclose(f);
	return a < 0 || r < 0 ? -1 : a - r;
}

/* The module's live pages, once every file closed (20 s at most). */
static long long module_live_pages(void)
{
	struct gpin_stats st = { .size = sizeof(st) };
	int fd = open(GPIN_DEVICE_PATH, O_RDWR), i;

	if (fd < 0)
		return -1;
	for (i = 0; i < 400; i++) {
		if (ioctl(fd, GPIN_IOC_STATS, &st) || !st.live_pages)
			break;
		usleep(50000);
	}
	close(fd);
	return st.live_pages;
}

static void report(void)
{
	int c, e;

	for (c = 0; c < C_COUNT; c++)
		printf("# %-12s %9ld calls, %9ld succeeded\n", cmd_names[c],
		       atomic_load(&calls[c]), atomic_load(&ok[c]));
	for (e = 1; e < 256; e++)
		if (atomic_load(&errnos[e]))
			printf("#   errno %-12s %9ld\n", strerrorname_np(e) ?: "?",
			       atomic_load(&errnos[e]));
}

int main(int argc, char **argv)
{
	pthread_t tid[NTHREADS];
	long long before, after, live;
	unsigned int seed;
	time_t end;
	int i, rc = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: gpin-fuzz SECONDS SEED DEVICE...\n");
		return 2;
	}
	end = time(NULL) + atoi(argv[1]);
	seed = strtoul(argv[2], NULL, 0);
	for (i = 3; i < argc && ndevices < MAX_DEVICES; i++) {
		devices[ndevices] = open(argv[i], O_RDWR);
		if (devices[ndevices] < 0) {
			perror(argv[i]);
			return 2;
		}
		ndevices++;
	}
	efd = eventfd(0, EFD_NONBLOCK);
	for (i = 0; i < NFILES; i++)
		atomic_store(&gfds[i], open(GPIN_DEVICE_PATH, O_RDWR));
	if (atomic_load(&gfds[0]) < 0) {
		perror(GPIN_DEVICE_PATH);
		return 2;
	}
	arena = mmap(NULL, NREGIONS * SLOT_PAGES * PAGE, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (arena == MAP_FAILED) {
		perror("gpin-fuzz: mmap");
		return 2;
	}
	for (i = 0; i < NREGIONS; i++)
		map_slot(i, PROT_READ | PROT_WRITE, MAP_FIXED);
	before = pins_held();
	printf("# gpin-fuzz: %s s, seed %u, %d devices, %d threads\n",
	       argv[1], seed, ndevices, NTHREADS);

	for (i = 0; i < NTHREADS; i++)
		pthread_create(&tid[i], NULL, worker,
			       (void *)(uintptr_t)(seed * 7919 + i));
	while (time(NULL) < end)
		chaos(&seed);
	atomic_store(&stop, 1);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < NFILES; i++)
		if (atomic_load(&gfds[i]) >= 0)
			close(atomic_load(&gfds[i]));

	report();
	live = module_live_pages();
	after = pins_held();
	if (live) {
		printf("FAIL: gpin.ko holds %lld pages 20 s after the last close\n",
		       live);
		rc = 1;
	}
	if (before >= 0 && after != before) {
		printf("FAIL: FOLL_PIN pins acquired - released %lld, was %lld\n",
		       after, before);
		rc = 1;
	}
	if (atomic_load(&unknown)) {
		printf("FAIL: %d calls returned an errno the UAPI does not name\n",
		       atomic_load(&unknown));
		rc = 1;
	}
	printf("# gpin-fuzz: %s\n", rc ? "failed" : "passed");
	return rc;
}
