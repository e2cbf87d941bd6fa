/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The Cloud Hypervisor HTTP API subset libvirt's ch driver speaks, as a
 * pure function: (method, path, body) → (status, JSON body), with the
 * VM's life as a small state machine.  What the requests *do* to a VM
 * is behind struct api_backend_ops, so tests drive every request and
 * every rejection without KVM (tests/unit/test_api.c); api/run.c is the
 * real backend.
 *
 *   NONE --vm.create--> CREATED --vm.boot--> RUNNING <--vm.resume-- PAUSED
 *                          ^                   |  \--vm.pause--------^
 *                          |             vm.shutdown, guest stops
 *                       vm.boot <-- SHUTDOWN <-/
 *   vm.delete: any state → NONE (a running VM is stopped first)
 *
 * Statuses: 200 with JSON, 204 without; 400 malformed JSON or a config
 * gpin-vmm cannot run; 404 unknown endpoint; 405 wrong method; 409 the
 * request does not fit the VM's state; 500 the VMM failed; 501 known but
 * not implemented by gpin-vmm.
 */
#ifndef GPIN_API_REQUEST_H
#define GPIN_API_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "counters.h"
#include "vm_config.h"

#define API_PREFIX		"/api/v1/"
#define API_BODY_MAX		(64U << 10)
/* The Cloud Hypervisor release whose API this subset follows. */
#define API_CH_VERSION		"32.0.0"

enum api_vm_state {
	API_VM_NONE,		/* no vm.create yet (or deleted) */
	API_VM_CREATED,
	API_VM_RUNNING,
	API_VM_PAUSED,
	API_VM_SHUTDOWN,
};

enum api_console_mode {
	API_CONSOLE_OFF,	/* "Off" or "Null": output dropped */
	API_CONSOLE_TTY,	/* "Tty": the VMM's own stdout */
	API_CONSOLE_PTY,	/* "Pty": a new pseudo-terminal */
};

/*
 * A vm.create body: the VM it describes, and what vm.info says back that
 * the VM's config does not keep.
 */
struct api_vm_config {
	struct vm_config vm;
	enum api_console_mode serial;
	enum api_console_mode console;
	bool cmdline_given;	/* vm.info shows a command line only if so */
};

struct api_backend_ops {
	/* Creates and starts the VM; 0, or -1 with a reason in @err. */
	int (*boot)(void *opaque, const struct vm_config *cfg, char *err,
		    size_t errlen);
	/* Stops the running (or paused) VM and frees it. */
	void (*stop)(void *opaque);
	/* NULL when the VMM cannot pause. */
	int (*pause)(void *opaque);
	int (*resume)(void *opaque);
	/* The console PTY's path, or NULL. */
	const char *(*pty_path)(void *opaque);
	/* vm.counters: @fn once per counter of the booted VM.  NULL: none. */
	void (*counters)(void *opaque, counter_fn fn, void *ctx);
	/* vmm.shutdown: the process ends once the response is sent. */
	void (*vmm_shutdown)(void *opaque);
};

struct api {
	enum api_vm_state state;
	struct api_vm_config cfg;	/* valid from CREATED on */
	const struct api_backend_ops *ops;
	void *opaque;
};

struct api_response {
	int status;
	char *body;		/* malloc'd JSON, or NULL (no content) */
};

void api__init(struct api *api, const struct api_backend_ops *ops,
	       void *opaque);
void api__free(struct api *api);

/* Serves one request; @resp->body is the caller's to free(). */
void api__handle(struct api *api, const char *method, const char *path,
		 const char *body, size_t len, struct api_response *resp);

/* The guest stopped on its own (power-off, exit device, panic). */
void api__guest_stopped(struct api *api);

/*
 * Parses a vm.create body into @cfg; 0, or -1 with a reason in @err.
 * Unknown keys are errors, so nothing a client asked for is dropped.
 */
int api__parse_vm_config(const char *body, size_t len,
			 struct api_vm_config *cfg, char *err, size_t errlen);

const char *api__state_name(enum api_vm_state s);

#endif /* GPIN_API_REQUEST_H */
