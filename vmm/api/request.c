// SPDX-License-Identifier: GPL-2.0-only
/*
 * Cloud Hypervisor API subset: routing, the VM's states, responses
 * (vm.create's body is parsed by api/create.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "api/request.h"
#include "config.h"

const char *api__state_name(enum api_vm_state s)
{
	switch (s) {
	case API_VM_CREATED:
		return "Created";
	case API_VM_RUNNING:
		return "Running";
	case API_VM_PAUSED:
		return "Paused";
	case API_VM_SHUTDOWN:
		return "Shutdown";
	case API_VM_NONE:
		break;
	}
	return "NotCreated";
}

/* ---- responses ---- */

static void respond_json(struct api_response *r, int status, json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							 JSON_C_TO_STRING_NOSLASHESCAPE);

	r->status = status;
	r->body = s ? strdup(s) : NULL;
	if (!r->body)
		r->status = 500;
	json_object_put(o);
}

static void __attribute__((format(printf, 3, 4)))
respond_error(struct api_response *r, int status, const char *fmt, ...)
{
	json_object *o = json_object_new_object();
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(o, "error", json_object_new_string(msg));
	respond_json(r, status, o);
}

static void respond_empty(struct api_response *r)
{
	r->status = 204;
	r->body = NULL;
}

static const char *const console_mode_names[] = {
	[API_CONSOLE_OFF] = "Off",
	[API_CONSOLE_TTY] = "Tty",
	[API_CONSOLE_PTY] = "Pty",
};

static json_object *console_json(struct api *api, enum api_console_mode m)
{
	json_object *o = json_object_new_object();
	const char *pty = api->ops->pty_path ? api->ops->pty_path(api->opaque) :
					       NULL;

	json_object_object_add(o, "mode",
			       json_object_new_string(console_mode_names[m]));
	json_object_object_add(o, "file", m == API_CONSOLE_PTY && pty ?
			       json_object_new_string(pty) : NULL);
	return o;
}

static json_object *path_obj(const char *path)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "path", json_object_new_string(path));
	return o;
}

static void vm_info(struct api *api, struct api_response *r)
{
	const struct vm_config *cfg = &api->cfg.vm;
	json_object *o = json_object_new_object(), *conf, *cpus, *mem, *payload;
	json_object *disks;
	unsigned int i;

	conf = json_object_new_object();
	cpus = json_object_new_object();
	json_object_object_add(cpus, "boot_vcpus", json_object_new_int(cfg->ncpus));
	json_object_object_add(cpus, "max_vcpus", json_object_new_int(cfg->ncpus));
	json_object_object_add(conf, "cpus", cpus);
	mem = json_object_new_object();
	json_object_object_add(mem, "size", json_object_new_int64(cfg->mem_size));
	json_object_object_add(conf, "memory", mem);
	payload = json_object_new_object();
	json_object_object_add(payload, "kernel",
			       json_object_new_string(cfg->kernel));
	if (api->cfg.cmdline_given)
		json_object_object_add(payload, "cmdline",
				       json_object_new_string(cfg->cmdline));
	if (cfg->initrd[0])
		json_object_object_add(payload, "initramfs",
				       json_object_new_string(cfg->initrd));
	json_object_object_add(conf, "payload", payload);
	/* The older spelling too, for clients of either API version. */
	json_object_object_add(conf, "kernel", path_obj(cfg->kernel));
	disks = json_object_new_array();
	for (i = 0; i < cfg->ndisks; i++) {
		json_object *d = json_object_new_object();

		json_object_object_add(d, "path",
				       json_object_new_string(cfg->disks[i].path));
		json_object_object_add(d, "readonly",
				       json_object_new_boolean(cfg->disks[i].ro));
		json_object_object_add(d, "direct", json_object_new_boolean(1));
		if (cfg->disks[i].queues)
			json_object_object_add(d, "num_queues",
				json_object_new_int(cfg->disks[i].queues));
		json_object_array_add(disks, d);
	}
	json_object_object_add(conf, "disks", disks);
	json_object_object_add(conf, "serial",
			       console_json(api, api->cfg.serial));
	json_object_object_add(conf, "console",
			       console_json(api, api->cfg.console));
	json_object_object_add(o, "config", conf);
	json_object_object_add(o, "state",
			       json_object_new_string(api__state_name(api->state)));
	json_object_object_add(o, "memory_actual_size",
			       json_object_new_int64(api->state == API_VM_RUNNING ||
						     api->state == API_VM_PAUSED ?
						     cfg->mem_size : 0));
	respond_json(r, 200, o);
}

/* Files one counter under its device's object, made on first sight. */
static void add_counter(void *ctx, const char *dev, const char *name,
			uint64_t value)
{
	json_object *root = ctx, *d;

	if (!json_object_object_get_ex(root, dev, &d)) {
		d = json_object_new_object();
		json_object_object_add(root, dev, d);
	}
	json_object_object_add(d, name, json_object_new_uint64(value));
}

/* Cloud Hypervisor's shape: {device id: {counter name: value}}. */
static void vm_counters(struct api *api, struct api_response *r)
{
	json_object *o = json_object_new_object();

	if (api->ops->counters)
		api->ops->counters(api->opaque, add_counter, o);
	respond_json(r, 200, o);
}

static void vmm_ping(struct api_response *r)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "build_version",
			       json_object_new_string("gpin-vmm " GPIN_VERSION));
	json_object_object_add(o, "version",
			       json_object_new_string("v" API_CH_VERSION));
	json_object_object_add(o, "pid", json_object_new_int(getpid()));
	json_object_object_add(o, "features", json_object_new_array());
	respond_json(r, 200, o);
}

/* ---- routing ---- */

enum endpoint {
	EP_VM_CREATE,
	EP_VM_BOOT,
	EP_VM_SHUTDOWN,
	EP_VM_REBOOT,
	EP_VM_PAUSE,
	EP_VM_RESUME,
	EP_VM_DELETE,
	EP_VM_INFO,
	EP_VM_COUNTERS,
	EP_VMM_PING,
	EP_VMM_SHUTDOWN,
};

static const struct {
	const char *name;
	const char *method;
} endpoints[] = {
	[EP_VM_CREATE]		= { "vm.create", "PUT" },
	[EP_VM_BOOT]		= { "vm.boot", "PUT" },
	[EP_VM_SHUTDOWN]	= { "vm.shutdown", "PUT" },
	[EP_VM_REBOOT]		= { "vm.reboot", "PUT" },
	[EP_VM_PAUSE]		= { "vm.pause", "PUT" },
	[EP_VM_RESUME]		= { "vm.resume", "PUT" },
	[EP_VM_DELETE]		= { "vm.delete", "PUT" },
	[EP_VM_INFO]		= { "vm.info", "GET" },
	[EP_VM_COUNTERS]	= { "vm.counters", "GET" },
	[EP_VMM_PING]		= { "vmm.ping", "GET" },
	[EP_VMM_SHUTDOWN]	= { "vmm.shutdown", "PUT" },
};

void api__init(struct api *api, const struct api_backend_ops *ops,
	       void *opaque)
{
	*api = (struct api) { .state = API_VM_NONE, .ops = ops,
			      .opaque = opaque };
}

void api__free(struct api *api)
{
	if (api->state == API_VM_RUNNING || api->state == API_VM_PAUSED)
		api->ops->stop(api->opaque);
	api->state = API_VM_NONE;
}

void api__guest_stopped(struct api *api)
{
	if (api->state == API_VM_RUNNING || api->state == API_VM_PAUSED)
		api->state = API_VM_SHUTDOWN;
}

static void wrong_state(struct api *api, const char *ep,
			struct api_response *r)
{
	respond_error(r, 409, "%s: the VM is %s", ep,
		      api__state_name(api->state));
}

static void do_boot(struct api *api, struct api_response *r)
{
	char err[512];

	if (api->state != API_VM_CREATED && api->state != API_VM_SHUTDOWN)
		return wrong_state(api, "vm.boot", r);
	if (api->ops->boot(api->opaque, &api->cfg.vm, err, sizeof(err)))
		return respond_error(r, 500, "vm.boot: %s", err);
	api->state = API_VM_RUNNING;
	respond_empty(r);
}

static bool running(const struct api *api)
{
	return api->state == API_VM_RUNNING || api->state == API_VM_PAUSED;
}

static void dispatch(struct api *api, enum endpoint ep, const char *body,
		     size_t len, struct api_response *r)
{
	char err[512];

	switch (ep) {
	case EP_VM_CREATE:
		if (api->state != API_VM_NONE)
			return wrong_state(api, "vm.create", r);
		/* into api->cfg: it counts only from CREATED on */
		if (api__parse_vm_config(body, len, &api->cfg, err,
					 sizeof(err)))
			return respond_error(r, 400, "vm.create: %s", err);
		api->state = API_VM_CREATED;
		return respond_empty(r);
	case EP_VM_BOOT:
		return do_boot(api, r);
	case EP_VM_SHUTDOWN:
		if (!running(api))
			return wrong_state(api, "vm.shutdown", r);
		api->ops->stop(api->opaque);
		api->state = API_VM_SHUTDOWN;
		return respond_empty(r);
	case EP_VM_REBOOT:
		if (!running(api))
			return wrong_state(api, "vm.reboot", r);
		api->ops->stop(api->opaque);
		api->state = API_VM_SHUTDOWN;
		return do_boot(api, r);
	case EP_VM_PAUSE:
	case EP_VM_RESUME: {
		bool pause = ep == EP_VM_PAUSE;
		int (*fn)(void *) = pause ? api->ops->pause : api->ops->resume;

		if (api->state != (pause ? API_VM_RUNNING : API_VM_PAUSED))
			return wrong_state(api, endpoints[ep].name, r);
		if (!fn)
			return respond_error(r, 501, "%s is not implemented by "
					     "gpin-vmm", endpoints[ep].name);
		if (fn(api->opaque))
			return respond_error(r, 500, "%s failed",
					     endpoints[ep].name);
		api->state = pause ? API_VM_PAUSED : API_VM_RUNNING;
		return respond_empty(r);
	}
	case EP_VM_DELETE:
		api__free(api);
		return respond_empty(r);
	case EP_VM_INFO:
		if (api->state == API_VM_NONE)
			return wrong_state(api, "vm.info", r);
		return vm_info(api, r);
	case EP_VM_COUNTERS:
		/* As Cloud Hypervisor: counters exist only for a booted VM. */
		if (!running(api))
			return wrong_state(api, "vm.counters", r);
		return vm_counters(api, r);
	case EP_VMM_PING:
		return vmm_ping(r);
	case EP_VMM_SHUTDOWN:
		api__free(api);
		api->ops->vmm_shutdown(api->opaque);
		return respond_empty(r);
	}
}

void api__handle(struct api *api, const char *method, const char *path,
		 const char *body, size_t len, struct api_response *resp)
{
	size_t plen = strlen(API_PREFIX);
	unsigned int i;

	resp->body = NULL;
	if (!method || !path || strncmp(path, API_PREFIX, plen))
		return respond_error(resp, 404, "no such endpoint: %s",
				     path ? path : "");
	for (i = 0; i < sizeof(endpoints) / sizeof(endpoints[0]); i++) {
		if (strcmp(path + plen, endpoints[i].name))
			continue;
		if (strcmp(method, endpoints[i].method))
			return respond_error(resp, 405, "%s takes %s, not %s",
					     endpoints[i].name,
					     endpoints[i].method, method);
		return dispatch(api, i, body, len, resp);
	}
	respond_error(resp, 404, "no such endpoint: %s", path);
}
