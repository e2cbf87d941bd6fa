// SPDX-License-Identifier: GPL-2.0-only
/*
 * gpin-vmm: start-up order, in one place.
 *
 *   1. parse options into a struct vm_config   (bad value: exit 2)
 *      the host defaults file, /etc/gpin/vmm.conf  (bad line: exit 2)
 *      --domain: libvirt domain XML, schema-validated → vm_config (exit 2)
 *      the host defaults fill what the route left to them
 *      --api-socket: block signals (3), then api/ serves HTTP and runs
 *      steps 4-7 for the vm_config that vm.create / vm.boot describe
 *   2. the console: this terminal, or a new PTY
 *   3. block signals; vCPU threads inherit the mask and take only the kick
 *   4. vm__boot(): read and check kernel and initrd (bad image: exit 2),
 *      create the VM: KVM, RAM, irqchip, devices, vCPUs (exit 1), load
 *      kernel, initrd, cmdline, ACPI into RAM (does not fit: exit 2),
 *      start the vCPU threads
 *   5. terminal to raw mode, console output thread
 *   6. serve console input and signals until the guest stops
 *   7. join the vCPUs, restore the terminal, exit with the guest's status
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "api/api.h"
#include "pty.h"
#include "config.h"
#include "config/apply.h"
#include "config/domain.h"
#include "config/host_defaults.h"
#include "console.h"
#include "log.h"
#include "options.h"
#include "vcpu.h"
#include "vm.h"

#define EXIT_USAGE	2
#define EXIT_VMM_ERROR	1

static void kick_handler(int sig)
{
	/* Only there so the signal interrupts KVM_RUN. */
}

/*
 * Returns a signalfd for the signals that end the VMM and for SIGUSR1,
 * which prints the disks' counters (main.c and api/run.c).
 */
static int setup_signals(void)
{
	struct sigaction sa = { .sa_handler = kick_handler };
	sigset_t set;

	sigemptyset(&sa.sa_mask);
	if (sigaction(VCPU_KICK_SIGNAL, &sa, NULL))
		return -1;
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, VCPU_KICK_SIGNAL);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL))
		return -1;
	sigdelset(&set, VCPU_KICK_SIGNAL);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

static void handle_signal(struct vm *vm, int sfd)
{
	struct signalfd_siginfo si;

	if (read(sfd, &si, sizeof(si)) != sizeof(si))
		return;
	if (si.ssi_signo == SIGUSR1)
		vm__print_state(vm);
	else
		vm_run__request_stop(&vm->run, VM_STOP_SIGNAL, si.ssi_signo);
}

/* Returns false once stdin is closed. */
static bool handle_console_input(struct vm *vm, struct console *con)
{
	uint8_t in[256], out[256];
	size_t room = serial__rx_room(vm->serial);
	bool quit;
	ssize_t n;

	if (room > sizeof(in))
		room = sizeof(in);
	n = read(con->in_fd, in, room);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN;
	if (n == 0)
		return false;
	n = console__filter_input(con, in, n, out, &quit);
	serial__receive(vm->serial, out, n);
	if (quit)
		vm_run__request_stop(&vm->run, VM_STOP_SIGNAL, SIGINT);
	return true;
}

static void serve_until_stopped(struct vm *vm, struct console *con, int sfd)
{
	bool stdin_open = true;

	while (!vm_run__stopping(&vm->run)) {
		/* Stop reading the terminal while the UART's buffer is full. */
		bool want_input = stdin_open && serial__rx_room(vm->serial);
		struct pollfd fds[3] = {
			{ .fd = vm->run.stop_efd, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
			{ .fd = want_input ? con->in_fd : -1, .events = POLLIN },
		};

		if (poll(fds, 3, want_input || !stdin_open ? -1 : 20) < 0) {
			if (errno == EINTR)
				continue;
			pr_err("poll: %s", strerror(errno));
			vm_run__request_stop(&vm->run, VM_STOP_ERROR, 0);
			break;
		}
		if (fds[1].revents & POLLIN)
			handle_signal(vm, sfd);
		if (fds[2].revents & (POLLIN | POLLHUP | POLLERR))
			stdin_open = handle_console_input(vm, con);
	}
}

static void report_stop(const struct vm *vm)
{
	switch (vm->run.reason) {
	case VM_STOP_PANIC:
		pr_info("guest kernel panicked");
		break;
	case VM_STOP_SIGNAL:
		pr_info("stopped by %s", strsignal(vm->run.exit_code));
		break;
	case VM_STOP_ERROR:
		pr_err("stopped on an error");
		break;
	default:
		break;
	}
}

static int run_vm(const struct vm_config *cfg)
{
	struct console con;
	struct serial_backend uart = { .tx = console__tx, .tx_opaque = &con };
	struct pty pty = { .master = -1, .slave = -1 };
	struct vm vm;
	char err[512];
	int sfd, ret, status = EXIT_VMM_ERROR;

	ret = console__open(&con, cfg->console, &pty);
	if (ret) {
		pr_err("console PTY: %s", strerror(-ret));
		return EXIT_VMM_ERROR;
	}
	if (pty.master >= 0)
		pr_info("console on %s", pty.path);
	sfd = setup_signals();
	if (sfd < 0) {
		pr_err("signals: %s", strerror(errno));
		goto out_pty;
	}
	ret = vm__boot(&vm, cfg, &uart, err, sizeof(err));
	if (ret) {
		pr_err("%s", err);
		status = ret == -ENOEXEC ? EXIT_USAGE : EXIT_VMM_ERROR;
		goto out_signals;
	}
	if (console__enter_raw(&con))
		pr_warn("cannot set the terminal raw");
	if (console__start(&con))
		pr_warn("no console output thread");
	serve_until_stopped(&vm, &con, sfd);
	vm__join(&vm);
	console__stop(&con);
	console__restore(&con);
	report_stop(&vm);
	status = vm_run__exit_status(&vm.run);
	vm__destroy(&vm);
out_signals:
	close(sfd);
out_pty:
	pty__close(&pty);
	return status;
}

/* --domain: the XML, validated against libvirt's schema, as the VM. */
static int load_domain(struct vm_options *opts, struct domain *dom)
{
	char err[512];

	if (domain__load(dom, opts->domain, domain__schema_path(), err,
			 sizeof(err))) {
		pr_err("%s", err);
		return -1;
	}
	if (domain__check_host(dom, err, sizeof(err)) ||
	    config__apply_domain(dom, &opts->vm, err, sizeof(err))) {
		pr_err("%s: %s", opts->domain, err);
		return -1;
	}
	return 0;
}

/* $GPIN_VMM_CONF or /etc/gpin/vmm.conf; 0 or -1 (said why). */
static int load_host_defaults(struct host_defaults *host)
{
	const char *env = getenv(HOST_DEFAULTS_ENV);
	char err[512];

	if (host_defaults__load(host, host_defaults__path(), env && *env, err,
				sizeof(err))) {
		pr_err("%s", err);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct host_defaults host;
	struct domain dom = { 0 };
	struct vm_options opts;
	char err[256];
	int status, sfd;

	if (options__parse(&opts, argc, argv, err, sizeof(err))) {
		pr_err("%s", err);
		return EXIT_USAGE;
	}
	log__set_level(opts.log_level);
	if (opts.help) {
		options__usage(stdout, "gpin-vmm");
		return 0;
	}
	if (opts.version) {
		api__print_version(stdout, argv[0]);
		return 0;
	}
	if (load_host_defaults(&host))
		return EXIT_USAGE;
	if (opts.api_fd >= 0 || opts.api_path) {
		sfd = setup_signals();
		if (sfd < 0) {
			pr_err("signals: %s", strerror(errno));
			return EXIT_VMM_ERROR;
		}
		status = api__serve(&opts, &host, sfd);
		close(sfd);
		return status;
	}
	if (opts.domain && load_domain(&opts, &dom)) {
		domain__free(&dom);
		return EXIT_USAGE;
	}
	host_defaults__apply(&host, &opts.vm);
	vm_config__resolve(&opts.vm);
	if (opts.print_config) {
		config__print(stdout, &opts.vm, &host,
			      opts.domain ? &dom : NULL);
		domain__free(&dom);
		return 0;
	}
	/* the config holds copies: the domain is not needed any more */
	domain__free(&dom);
	return run_vm(&opts.vm);
}
