// SPDX-License-Identifier: GPL-2.0
/*
 * gpin-orphan: module unload racing the last direct I/O completions
 * (run by tests/pin/in-host.sh in the test host, gpin.ko loaded).
 *
 *   gpin-orphan DEV NREQ close|reap
 *
 * Submits NREQ reads of one page each from DEV through /dev/gpin (the three
 * modes in turn), then
 *   close  closes the file at once: requests still in flight are orphans,
 *          which hold the module until the last of them completes;
 *   reap   reaps every completion first (each was published to the open
 *          file by code of the module that may still be returning), then
 *          closes;
 * and at once unloads gpin.ko (delete_module, non-blocking, in a tight
 * loop until it goes): the unload must wait for every completion still in
 * module text, and nothing may crash.  Prints how many attempts were
 * refused.  Exit: 0 unloaded, 1 error, 2 not unloaded within 60 s.
 * Raw ioctls (include/gpin.h), no libgpin: this program outlives the
 * module it unloads and needs nothing else.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <gpin.h>

#define PAGE	4096UL

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int die(const char *what)
{
	fprintf(stderr, "gpin-orphan: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	struct gpin_dio_event ev[64];
	unsigned long refused = 0;
	int gfd, fd, nreq, reap, i;
	struct iovec *iov;
	double end;
	char *buf;

	if (argc != 4 || (strcmp(argv[3], "close") && strcmp(argv[3], "reap"))) {
		fprintf(stderr, "usage: gpin-orphan DEV NREQ close|reap\n");
		return 1;
	}
	nreq = atoi(argv[2]);
	reap = !strcmp(argv[3], "reap");
	if (nreq < 1 || nreq > 256)
		return 1;
	gfd = open("/dev/gpin", O_RDWR);
	fd = open(argv[1], O_RDWR);
	if (gfd < 0 || fd < 0)
		return die("open");
	buf = mmap(NULL, nreq * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	iov = calloc(nreq, sizeof(*iov));
	if (buf == MAP_FAILED || !iov)
		return die("memory");

	for (i = 0; i < nreq; i++) {
		struct gpin_dio d = {
			.size = sizeof(d),
			.fd = fd,
			.op = GPIN_DIO_READ,
			.offset = (uint64_t)i * PAGE,
			.iov = (uintptr_t)&iov[i],
			.nr_segs = 1,
			.mode = i % GPIN_MODE_COUNT,
			.user_data = i,
		};
		struct gpin_dio_submit s = {
			.size = sizeof(s),
			.nr = 1,
			.reqs = (uintptr_t)&d,
		};

		iov[i].iov_base = buf + i * PAGE;
		iov[i].iov_len = PAGE;
		if (ioctl(gfd, GPIN_IOC_DIO_SUBMIT, &s) != 1)
			return die("GPIN_IOC_DIO_SUBMIT");
	}
	end = now() + 60;
	for (i = 0; reap && i < nreq && now() < end;) {
		struct gpin_dio_reap r = {
			.size = sizeof(r),
			.nr = 64,
			.events = (uintptr_t)ev,
		};
		int n = ioctl(gfd, GPIN_IOC_DIO_REAP, &r);

		if (n < 0)
			return die("GPIN_IOC_DIO_REAP");
		i += n;
	}
	close(gfd);
	close(fd);

	while (syscall(SYS_delete_module, "gpin", O_NONBLOCK)) {
		if (errno != EWOULDBLOCK && errno != EAGAIN)
			return die("delete_module");
		refused++;
		if (now() > end) {
			fprintf(stderr, "gpin-orphan: still loaded after 60 s\n");
			return 2;
		}
	}
	printf("# gpin-orphan %s %d %s: unloaded after %lu refused attempts\n",
	       argv[1], nreq, argv[3], refused);
	return 0;
}
