// SPDX-License-Identifier: GPL-2.0
/* libgpin: thin errno-style wrappers around the /dev/gpin ioctls. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "libgpin.h"

struct libgpin {
	int fd;
};

struct libgpin *libgpin_open(void)
{
	struct libgpin *g;
	int err;

	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->fd = open(GPIN_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (g->fd < 0) {
		err = errno;
		/* a stale node without the driver behind it reads the same */
		if (err == ENXIO || err == ENODEV)
			err = ENOENT;
		free(g);
		errno = err;
		return NULL;
	}
	return g;
}

int libgpin_close(struct libgpin *g)
{
	int ret;

	if (!g)
		return 0;
	ret = close(g->fd);
	free(g);
	return ret ? -1 : 0;
}

int libgpin_fd(const struct libgpin *g)
{
	return g->fd;
}

int libgpin_pin(struct libgpin *g, const void *start, uint64_t npages,
	     enum gpin_mode mode, unsigned int flags, uint64_t *pfns,
	     uint32_t *handle, uint64_t *fast_pages)
{
	struct gpin_pin p = {
		.size = sizeof(p),
		.flags = flags,
		.start = (uintptr_t)start,
		.npages = npages,
		.pfns = (uintptr_t)pfns,
		.mode = mode,
	};

	if (ioctl(g->fd, GPIN_IOC_PIN, &p))
		return -1;
	if (handle)
		*handle = p.handle;
	if (fast_pages)
		*fast_pages = p.fast_pages;
	return 0;
}

int libgpin_unpin(struct libgpin *g, uint32_t handle)
{
	struct gpin_unpin u = {
		.size = sizeof(u),
		.handle = handle,
	};

	return ioctl(g->fd, GPIN_IOC_UNPIN, &u) ? -1 : 0;
}

static int stats_read(struct libgpin *g, struct gpin_stats *st,
		      unsigned int flags)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->flags = flags;
	return ioctl(g->fd, GPIN_IOC_STATS, st) ? -1 : 0;
}

static int stats_reset(struct libgpin *g, unsigned int flags)
{
	struct gpin_stats_reset r = {
		.size = sizeof(r),
		.flags = flags,
	};

	return ioctl(g->fd, GPIN_IOC_STATS_RESET, &r) ? -1 : 0;
}

int libgpin_stats(struct libgpin *g, struct gpin_stats *st)
{
	return stats_read(g, st, 0);
}

int libgpin_stats_reset(struct libgpin *g)
{
	return stats_reset(g, 0);
}

int libgpin_file_stats(struct libgpin *g, struct gpin_stats *st)
{
	return stats_read(g, st, GPIN_STATS_FILE);
}

int libgpin_file_stats_reset(struct libgpin *g)
{
	return stats_reset(g, GPIN_STATS_FILE);
}

void libgpin_dio_prep(struct gpin_dio *d, int fd, enum gpin_dio_op op,
		   uint64_t offset, const struct iovec *iov,
		   unsigned int nr_segs, enum gpin_mode mode,
		   uint64_t user_data)
{
	memset(d, 0, sizeof(*d));
	d->size = sizeof(*d);
	d->fd = fd;
	d->op = op;
	d->offset = offset;
	d->iov = (uintptr_t)iov;
	d->nr_segs = nr_segs;
	d->mode = mode;
	d->user_data = user_data;
}

void libgpin_dio_use_pinned(struct gpin_dio *d, const struct libgpin *pins)
{
	d->flags |= GPIN_DIO_PINNED;
	d->pins_fd = pins->fd;
	d->mode = 0;
}

ssize_t libgpin_dio(struct libgpin *g, int fd, enum gpin_dio_op op,
		 uint64_t offset, const struct iovec *iov, unsigned int nr_segs,
		 enum gpin_mode mode)
{
	struct gpin_dio d;
	int ret;

	libgpin_dio_prep(&d, fd, op, offset, iov, nr_segs, mode, 0);
	ret = ioctl(g->fd, GPIN_IOC_DIO, &d);
	return ret < 0 ? -1 : ret;
}

int libgpin_dio_submit(struct libgpin *g, struct gpin_dio *reqs, unsigned int nr)
{
	struct gpin_dio_submit s = {
		.size = sizeof(s),
		.nr = nr,
		.reqs = (uintptr_t)reqs,
	};
	int ret = ioctl(g->fd, GPIN_IOC_DIO_SUBMIT, &s);

	return ret < 0 ? -1 : ret;
}

int libgpin_dio_reap(struct libgpin *g, struct gpin_dio_event *ev, unsigned int max,
		  uint64_t *inflight)
{
	struct gpin_dio_reap r = {
		.size = sizeof(r),
		.nr = max,
		.events = (uintptr_t)ev,
	};
	int ret = ioctl(g->fd, GPIN_IOC_DIO_REAP, &r);

	if (ret < 0)
		return -1;
	if (inflight)
		*inflight = r.inflight;
	return ret;
}

int libgpin_set_eventfd(struct libgpin *g, int efd)
{
	struct gpin_set_eventfd e = {
		.size = sizeof(e),
		.fd = efd,
	};

	return ioctl(g->fd, GPIN_IOC_SET_EVENTFD, &e) ? -1 : 0;
}

const char *libgpin_mode_name(enum gpin_mode mode)
{
	switch (mode) {
	case GPIN_MODE_FAST:
		return "fast";
	case GPIN_MODE_LOCKED:
		return "locked";
	case GPIN_MODE_KERNEL:
		return "kernel";
	default:
		return "?";
	}
}

const char *libgpin_strerror(int err)
{
	switch (err) {
	case ENOENT:
		return GPIN_DEVICE_PATH " not found: gpin.ko is not loaded";
	case EACCES:
		return GPIN_DEVICE_PATH " is root-only (mode 0600)";
	case EPERM:
		return "not the process that opened " GPIN_DEVICE_PATH;
	case E2BIG:
		return "more than GPIN_MAX_PAGES_PER_PIN pages, GPIN_DIO_MAX_SEGS segments or GPIN_DIO_MAX_BYTES bytes";
	case ENOSPC:
		return "the file holds GPIN_MAX_PAGES_PER_FILE pages or GPIN_MAX_HANDLES_PER_FILE handles";
	default:
		return strerror(err);
	}
}
