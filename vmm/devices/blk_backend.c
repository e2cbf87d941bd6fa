// SPDX-License-Identifier: GPL-2.0-only
/* What every backend shares: opening the backing, its size and block size. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/fs.h>

#include "devices/blk_backend.h"

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
		snprintf(err, errlen, "%s: not a regular file or block device",
			 be->p.path);
		return -EINVAL;
	}
	if (lbs < SECTOR || lbs > 65536 || (lbs & (lbs - 1))) {
		snprintf(err, errlen, "%s: unusable block size %d", be->p.path,
			 lbs);
		return -EINVAL;
	}
	be->lbs = lbs;
	be->size -= be->size % lbs;
	if (!be->size) {
		snprintf(err, errlen, "%s: smaller than one %u-byte block",
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
		fprintf(stderr, "gpin-vmm: %s: no O_DIRECT on this filesystem, "
			"using buffered I/O\n", be->p.path);
		be->direct = false;
		be->fd = open(be->p.path, flags);
	}
	if (be->fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", be->p.path, strerror(errno));
		return ret;
	}
	err[0] = '\0';
	ret = backing_geometry(be, err, errlen);
	if (ret && !err[0])
		snprintf(err, errlen, "%s: %s", be->p.path, strerror(-ret));
	return ret;
}

struct blk_backend *blk_backend__open(const struct blk_backend_ops *ops,
				      const struct blk_backend_params *p,
				      char *err, size_t errlen)
{
	struct blk_backend *be = calloc(1, sizeof(*be));
	int ret;

	if (!be) {
		snprintf(err, errlen, "out of memory");
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
		snprintf(err, errlen, "%s: starting the %s backend: %s",
			 p->path, ops->name, strerror(-ret));
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
