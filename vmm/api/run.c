// SPDX-License-Identifier: GPL-2.0-only
/*
 * --api-socket: the main thread owns the VM, the HTTP server's thread
 * only carries requests.  A request is handed over through a one-slot
 * mailbox (an eventfd wakes the main thread, a condition variable wakes
 * the server thread with the response), so api__handle() and every VM
 * operation run on the main thread, next to the guest-stopped eventfd,
 * the console PTY and the signalfd: nothing about the VM needs a lock.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "api/api.h"
#include "pty.h"
#include "api/request.h"
#include "api/server.h"
#include "config.h"
#include "config/host_defaults.h"
#include "console.h"
#include "log.h"
#include "vcpu.h"
#include "vm.h"

struct call {
	const char *method, *path, *body;
	size_t len;
	struct api_response resp;
	bool done;
};

struct vmm {
	int sfd;
	int call_efd;		/* a call waits in @pending */
	int quit_efd;		/* vmm.shutdown's response is out */
	pthread_mutex_t lock;	/* @pending, @closing, @quit_requested */
	pthread_cond_t cond;
	struct call *pending;
	bool closing;
	bool quit_requested;

	struct api api;
	const struct vm_options *opts;	/* the command line's test hooks */
	const struct host_defaults *host;	/* /etc/gpin/vmm.conf */
	struct vm_config cfg;		/* the VM being booted */
	struct vm vm;
	bool vm_live;
	struct console con;
	struct pty pty;
	int status;
};

void api__print_version(FILE *out, const char *argv0)
{
	const char *base = argv0 ? strrchr(argv0, '/') : NULL;

	base = base ? base + 1 : argv0;
	if (base && !strcmp(base, "cloud-hypervisor"))
		fprintf(out, "cloud-hypervisor v%s (gpin-vmm %s)\n",
			API_CH_VERSION, GPIN_VERSION);
	else
		fprintf(out, "gpin-vmm %s\n", GPIN_VERSION);
}

/* ---- the backend: the real VM ---- */

static int backend_boot(void *opaque, const struct vm_config *cfg, char *err,
			size_t errlen)
{
	struct vmm *v = opaque;
	struct serial_backend uart = { .tx = console__tx, .tx_opaque = &v->con };
	int ret;

	/*
	 * vm.create's VM, with what the command line adds to every VM
	 * (--test-exit-port, --churn) and the host's defaults for what
	 * vm.create has no word for: every disk's pin, service and transport.
	 */
	v->cfg = *cfg;
	v->cfg.test_exit_port = v->opts->vm.test_exit_port;
	v->cfg.churn_kib = v->opts->vm.churn_kib;
	v->cfg.churn_hz = v->opts->vm.churn_hz;
	host_defaults__apply(v->host, &v->cfg);
	vm_config__resolve(&v->cfg);
	/* One PTY for the VMM's life: its path survives vm.reboot. */
	ret = console__open(&v->con, v->cfg.console, &v->pty);
	if (ret)
		return err__set(err, errlen, "console PTY: %s", strerror(-ret));
	ret = console__start(&v->con);
	if (ret)
		return err__set(err, errlen, "console output thread: %s",
				strerror(-ret));
	if (vm__boot(&v->vm, &v->cfg, &uart, err, errlen)) {
		console__stop(&v->con);
		return -1;
	}
	v->vm_live = true;
	return 0;
}

static void vm_end(struct vmm *v)
{
	if (!v->vm_live)
		return;
	vm__join(&v->vm);
	vm__destroy(&v->vm);
	console__stop(&v->con);
	v->vm_live = false;
}

static void backend_stop(void *opaque)
{
	struct vmm *v = opaque;

	if (v->vm_live)
		vm_run__request_stop(&v->vm.run, VM_STOP_POWEROFF, 0);
	vm_end(v);
}

static const char *backend_pty_path(void *opaque)
{
	struct vmm *v = opaque;

	return v->pty.master >= 0 ? v->pty.path : NULL;
}

static void backend_vmm_shutdown(void *opaque)
{
	struct vmm *v = opaque;

	pthread_mutex_lock(&v->lock);
	v->quit_requested = true;
	pthread_mutex_unlock(&v->lock);
}

static int backend_pause(void *opaque)
{
	struct vmm *v = opaque;

	return v->vm_live ? vm_run__pause(&v->vm.run, v->vm.ncpus) : -ESRCH;
}

static int backend_resume(void *opaque)
{
	struct vmm *v = opaque;

	return v->vm_live ? vm_run__resume(&v->vm.run) : -ESRCH;
}

static void backend_counters(void *opaque, counter_fn fn, void *ctx)
{
	struct vmm *v = opaque;

	if (v->vm_live)
		vm__counters(&v->vm, fn, ctx);
}

static const struct api_backend_ops backend_ops = {
	.boot = backend_boot,
	.stop = backend_stop,
	.pause = backend_pause,
	.resume = backend_resume,
	.pty_path = backend_pty_path,
	.counters = backend_counters,
	.vmm_shutdown = backend_vmm_shutdown,
};

/* ---- the server thread's side of the mailbox ---- */

static void server_handle(void *opaque, const char *method, const char *path,
			  const char *body, size_t len,
			  struct api_response *resp)
{
	struct vmm *v = opaque;
	struct call c = { .method = method, .path = path, .body = body,
			  .len = len };

	pthread_mutex_lock(&v->lock);
	while (v->pending && !v->closing)
		pthread_cond_wait(&v->cond, &v->lock);
	if (v->closing) {
		pthread_mutex_unlock(&v->lock);
		resp->status = 503;
		resp->body = strdup("{\"error\":\"the VMM is shutting down\"}");
		return;
	}
	v->pending = &c;
	pthread_mutex_unlock(&v->lock);
	if (eventfd_write(v->call_efd, 1))
		pr_err("api: eventfd_write: %s", strerror(errno));
	pthread_mutex_lock(&v->lock);
	while (!c.done)
		pthread_cond_wait(&v->cond, &v->lock);
	pthread_mutex_unlock(&v->lock);
	*resp = c.resp;
}

static void server_completed(void *opaque)
{
	struct vmm *v = opaque;
	bool quit;

	pthread_mutex_lock(&v->lock);
	quit = v->quit_requested;
	pthread_mutex_unlock(&v->lock);
	if (quit && eventfd_write(v->quit_efd, 1))
		pr_err("api: eventfd_write: %s", strerror(errno));
}

static const struct api_server_ops server_ops = {
	.handle = server_handle,
	.completed = server_completed,
};

/* ---- the main thread ---- */

static void serve_call(struct vmm *v)
{
	struct call *c;
	eventfd_t n;

	if (eventfd_read(v->call_efd, &n))
		return;
	pthread_mutex_lock(&v->lock);
	c = v->pending;
	pthread_mutex_unlock(&v->lock);
	if (!c)
		return;
	api__handle(&v->api, c->method, c->path, c->body, c->len, &c->resp);
	pthread_mutex_lock(&v->lock);
	c->done = true;
	v->pending = NULL;
	pthread_cond_broadcast(&v->cond);
	pthread_mutex_unlock(&v->lock);
}

static void guest_stopped(struct vmm *v)
{
	switch (v->vm.run.reason) {
	case VM_STOP_PANIC:
		pr_info("guest kernel panicked");
		break;
	case VM_STOP_ERROR:
		pr_err("the VM stopped on an error");
		break;
	default:
		pr_info("the guest stopped (status %d)",
			vm_run__exit_status(&v->vm.run));
		break;
	}
	vm_end(v);
	api__guest_stopped(&v->api);
}

static void console_input(struct vmm *v)
{
	uint8_t buf[256];
	size_t room = serial__rx_room(v->vm.serial);
	ssize_t n;

	if (room > sizeof(buf))
		room = sizeof(buf);
	n = read(v->pty.master, buf, room);
	if (n > 0)
		serial__receive(v->vm.serial, buf, n);
}

static void serve(struct vmm *v)
{
	struct signalfd_siginfo si;
	eventfd_t n;

	for (;;) {
		bool live = v->vm_live;
		bool input = live && v->con.in_fd >= 0;
		bool want = input && serial__rx_room(v->vm.serial);
		struct pollfd fds[5] = {
			{ .fd = v->sfd, .events = POLLIN },
			{ .fd = v->call_efd, .events = POLLIN },
			{ .fd = v->quit_efd, .events = POLLIN },
			{ .fd = live ? v->vm.run.stop_efd : -1, .events = POLLIN },
			{ .fd = want ? v->con.in_fd : -1, .events = POLLIN },
		};

		/* A full UART receive buffer: look again soon. */
		if (poll(fds, 5, input && !want ? 20 : -1) < 0) {
			if (errno == EINTR)
				continue;
			pr_err("poll: %s", strerror(errno));
			v->status = 1;
			return;
		}
		if (fds[0].revents & POLLIN &&
		    read(v->sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGUSR1) {
				/* As at exit, and the vCPUs; no VM, no lines. */
				if (v->vm_live)
					vm__print_state(&v->vm);
				continue;
			}
			pr_info("stopped by %s", strsignal(si.ssi_signo));
			v->status = 128 + si.ssi_signo;
			return;
		}
		if (fds[1].revents & POLLIN)
			serve_call(v);
		if (fds[2].revents & POLLIN && !eventfd_read(v->quit_efd, &n))
			return;
		if (fds[3].revents & POLLIN && v->vm_live)
			guest_stopped(v);
		if (fds[4].revents & POLLIN && v->vm_live)
			console_input(v);
	}
}

int api__serve(const struct vm_options *opts,
	       const struct host_defaults *host, int sfd)
{
	struct vmm v = {
		.sfd = sfd,
		.opts = opts,
		.host = host,
		.pty = { .master = -1, .slave = -1 },
	};
	struct api_server *srv;
	char err[256];
	int fd;

	pthread_mutex_init(&v.lock, NULL);
	pthread_cond_init(&v.cond, NULL);
	api__init(&v.api, &backend_ops, &v);
	v.call_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	v.quit_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (v.call_efd < 0 || v.quit_efd < 0) {
		pr_err("eventfd: %s", strerror(errno));
		return 1;
	}
	fd = opts->api_path ? api_server__listen_path(opts->api_path, err,
						      sizeof(err)) : opts->api_fd;
	if (fd < 0) {
		pr_err("--api-socket: %s", err);
		return 2;
	}
	srv = api_server__start(fd, &server_ops, &v, err, sizeof(err));
	if (!srv) {
		pr_err("--api-socket: %s", err);
		return 1;
	}
	serve(&v);

	/* Refuse what arrives from now on, answer what waits, then stop. */
	pthread_mutex_lock(&v.lock);
	v.closing = true;
	if (v.pending) {
		v.pending->resp.status = 503;
		v.pending->resp.body = NULL;
		v.pending->done = true;
		v.pending = NULL;
	}
	pthread_cond_broadcast(&v.cond);
	pthread_mutex_unlock(&v.lock);
	api__free(&v.api);
	api_server__stop(srv);
	if (opts->api_path)
		unlink(opts->api_path);
	pty__close(&v.pty);
	close(v.call_efd);
	close(v.quit_efd);
	return v.status;
}
