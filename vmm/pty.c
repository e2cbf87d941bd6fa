// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "pty.h"

int pty__open(struct pty *p)
{
	struct termios t;
	int ret;

	p->slave = -1;
	p->master = posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (p->master < 0)
		return -errno;
	if (grantpt(p->master) || unlockpt(p->master) ||
	    ptsname_r(p->master, p->path, sizeof(p->path)))
		goto err;
	p->slave = open(p->path, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (p->slave < 0 || tcgetattr(p->slave, &t))
		goto err;
	/* The guest's 8250 driver does its own CR/LF and echo. */
	cfmakeraw(&t);
	if (tcsetattr(p->slave, TCSANOW, &t))
		goto err;
	return 0;
err:
	ret = -errno;
	pty__close(p);
	return ret ? ret : -EIO;
}

void pty__close(struct pty *p)
{
	if (p->slave >= 0)
		close(p->slave);
	if (p->master >= 0)
		close(p->master);
	p->slave = p->master = -1;
}
