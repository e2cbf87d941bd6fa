// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define FILE_SIZE_MAX	(2ULL << 30)	/* no kernel or initramfs is bigger */

int read_whole_file(const char *path, uint8_t **buf, size_t *size)
{
	struct stat st;
	size_t done = 0;
	int fd, ret = 0;
	uint8_t *p;

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
	p = malloc(st.st_size ? st.st_size : 1);
	if (!p) {
		ret = -ENOMEM;
		goto out;
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, p + done, st.st_size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			free(p);
			goto out;
		}
		done += n;
	}
	*buf = p;
	*size = done;
out:
	close(fd);
	return ret;
}
