// SPDX-License-Identifier: GPL-2.0-only
/*
 * What every backend shares: opening the backing, its size and block
 * size, and the bounce buffer for misaligned guest buffers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/fs.h>

#include "devices/blk_backend.h"
#include "log.h"

#define SECTOR		512

static int backing_geometry(struct blk_backend *be, char *err, size_t errlen)
{
	struct stat st;
	int lbs = SECTOR;

	if (fstat(be->fd, &st))
		return -errno;
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(be->fd, BLKGETSIZE64, &be->size) ||
		    ioctl(be->fd, BLKSSZGET, &lbs))
			return -errno;
	} else if (S_ISREG(st.st_mode)) {
		be->size = st.st_size;
#ifdef STATX_DIOALIGN
		struct statx stx;

		if (be->direct &&
		    !statx(be->fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) &&
		    (stx.stx_mask & STATX_DIOALIGN) && stx.stx_dio_offset_align)
			lbs = stx.stx_dio_offset_align;
#endif
	} else {
		err__set(err, errlen, "%s: not a regular file or block device",
			 be->p.path);
		return -EINVAL;
	}
	if (lbs < SECTOR || lbs > 65536 || (lbs & (lbs - 1))) {
		err__set(err, errlen, "%s: unusable block size %d", be->p.path,
			 lbs);
		return -EINVAL;
	}
	be->lbs = lbs;
	be->size -= be->size % lbs;
	if (!be->size) {
		err__set(err, errlen, "%s: smaller than one %u-byte block",
			 be->p.path, be->lbs);
		return -EINVAL;
	}
	return 0;
}

static int open_backing(struct blk_backend *be, char *err, size_t errlen)
{
	int flags = (be->p.ro ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	int ret;

	be->direct = true;
	be->fd = open(be->p.path, flags | O_DIRECT);
	if (be->fd < 0 && errno == EINVAL) {
		/* tmpfs before 6.6, 9p, ...: usable, but not what we measure. */
		pr_warn("%s: no O_DIRECT on this filesystem, "
			"using buffered I/O", be->p.path);
		be->direct = false;
		be->fd = open(be->p.path, flags);
	}
	if (be->fd < 0) {
		ret = -errno;
		err__set(err, errlen, "%s: %s", be->p.path, strerror(errno));
		return ret;
	}
	err[0] = '\0';
	ret = backing_geometry(be, err, errlen);
	if (ret && !err[0])
		err__set(err, errlen, "%s: %s", be->p.path, strerror(-ret));
	return ret;
}

const char *blk_backend__pin_name(const struct blk_backend *be)
{
	return be->ops->pin_name ? be->ops->pin_name(be) : be->ops->name;
}

struct blk_backend *blk_backend__open(const struct blk_backend_ops *ops,
				      const struct blk_backend_params *p,
				      char *err, size_t errlen)
{
	struct blk_backend *be = calloc(1, sizeof(*be));
	int ret;

	if (!be) {
		err__set(err, errlen, "out of memory");
		return NULL;
	}
	be->ops = ops;
	be->p = *p;
	be->fd = -1;
	ret = open_backing(be, err, errlen);
	if (ret)
		goto err_close;
	ret = ops->start(be);
	if (ret) {
		err__set(err, errlen, "%s: starting the %s backend: %s",
			 p->path, blk_backend__pin_name(be), strerror(-ret));
		goto err_close;
	}
	return be;

err_close:
	if (be->fd >= 0)
		close(be->fd);
	free(be);
	return NULL;
}

void blk_backend__close(struct blk_backend *be)
{
	if (!be)
		return;
	be->ops->stop(be);
	close(be->fd);
	free(be);
}

bool blk_backend__aligned(const struct blk_backend *be,
			  const struct iovec *iov, unsigned int niov)
{
	uintptr_t mask = be->lbs - 1;
	unsigned int i;

	if (!be->direct)
		return true;
	for (i = 0; i < niov; i++)
		if (((uintptr_t)iov[i].iov_base | iov[i].iov_len) & mask)
			return false;
	return true;
}

static void iov_to_buf(void *dst, const struct iovec *iov, unsigned int n)
{
	uint8_t *d = dst;
	unsigned int i;

	for (i = 0; i < n; i++) {
		memcpy(d, iov[i].iov_base, iov[i].iov_len);
		d += iov[i].iov_len;
	}
}

static void buf_to_iov(const struct iovec *iov, unsigned int n,
		       const void *src, size_t len)
{
	const uint8_t *s = src;
	unsigned int i;

	for (i = 0; i < n && len; i++) {
		size_t take = iov[i].iov_len < len ? iov[i].iov_len : len;

		memcpy(iov[i].iov_base, s, take);
		s += take;
		len -= take;
	}
}

/*
 * Bounce buffers are mapped and unmapped, not malloc'ed: they are up to
 * 4 MiB, and glibc would keep freed ones resident in whichever thread's
 * arena prepared them (it raises its mmap threshold after the first free),
 * memory outside the budget.  Mapped, the budget is the whole cost.
 * They come page-aligned, what O_DIRECT asks of memory on block sizes up
 * to the page size.
 */
static void *bounce_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void bounce_free(void *p, size_t len)
{
	munmap(p, len);
}

int blk_backend__bounce(struct blk_backend *be, struct blk_io *io)
{
	io->bounce = NULL;
	if (blk_backend__aligned(be, io->iov, io->niov))
		return 0;
	/* the charge first: two queues racing cannot both pass the budget */
	if (atomic_fetch_add(&be->bounce_bytes, io->len) + io->len >
	    BLK_BOUNCE_BUDGET) {
		atomic_fetch_sub(&be->bounce_bytes, io->len);
		return -ENOBUFS;
	}
	io->bounce = bounce_alloc(io->len);
	if (!io->bounce) {
		atomic_fetch_sub(&be->bounce_bytes, io->len);
		return -ENOMEM;
	}
	if (io->op == BLK_IO_WRITE)
		iov_to_buf(io->bounce, io->iov, io->niov);
	return 0;
}

int64_t blk_backend__finish(struct blk_backend *be, struct blk_io *io,
			    int64_t res, bool to_guest)
{
	switch (io->op) {
	case BLK_IO_READ:
	case BLK_IO_WRITE:
		if (res >= 0 && (uint64_t)res != io->len)
			res = -EIO;		/* short: the disk ended early */
		if (io->bounce && res >= 0 && io->op == BLK_IO_READ && to_guest)
			buf_to_iov(io->iov, io->niov, io->bounce, io->len);
		if (io->bounce) {
			bounce_free(io->bounce, io->len);
			io->bounce = NULL;
			atomic_fetch_sub(&be->bounce_bytes, io->len);
		}
		return res;
	case BLK_IO_DISCARD:
		/* Discard is a hint: a backing that cannot punch ignores it. */
		return res == -EOPNOTSUPP ? 0 : res;
	default:
		return res;
	}
}
