/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest console on a new pseudo-terminal (libvirt's <console
 * type='pty'>, Cloud Hypervisor's "mode": "Pty").  The VMM keeps the
 * master and one descriptor of the slave: holding the slave open means
 * the master never reads EIO between two readers (virsh console comes
 * and goes) and what the guest printed before anyone attached waits in
 * the terminal's buffer.  The master is non-blocking: when nobody reads
 * and the buffer is full, console output is dropped, the guest never
 * stalls on it.
 */
#ifndef GPIN_PTY_H
#define GPIN_PTY_H

struct pty {
	int master;
	int slave;
	char path[64];		/* /dev/pts/N */
};

/* Opens a raw-mode PTY; 0 or -errno. */
int pty__open(struct pty *p);
void pty__close(struct pty *p);

#endif /* GPIN_PTY_H */
