// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define FILE_SIZE_MAX	(2ULL << 30)	/* no kernel or initramfs is bigger */

int map_file(const char *path, struct mapped_file *f)
{
	struct stat st;
	void *p;
	int fd, ret = 0;

	*f = (struct mapped_file){ 0 };
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto out;
	}
	if ((unsigned long long)st.st_size > FILE_SIZE_MAX) {
		ret = -EFBIG;
		goto out;
	}
	if (!st.st_size)
		goto out;	/* nothing to map; the loaders reject it */
	/*
	 * Page cache, not a private copy: resident only while mapped, and
	 * shared with any other process reading the same image.
	 */
	p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	f->data = p;
	f->size = st.st_size;
out:
	close(fd);
	return ret;
}

void unmap_file(struct mapped_file *f)
{
	if (f->data)
		munmap((void *)f->data, f->size);
	*f = (struct mapped_file){ 0 };
}
