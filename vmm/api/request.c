// SPDX-License-Identifier: GPL-2.0-only
/* Cloud Hypervisor API subset: routing, vm.create parsing, VM states. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "api/request.h"
#include "arch/x86/layout.h"
#include "config.h"
#include "log.h"
#include "options.h"

struct cfg_ctx {
	char *err;
	size_t errlen;
};

/* The reason goes to the caller's buffer (log.h's convention). */
#define cfg_fail(c, ...)	err__set((c)->err, (c)->errlen, __VA_ARGS__)

/* Every key of @obj must be in @allowed (NULL-terminated). */
static int check_keys(struct cfg_ctx *c, const char *where,
		      json_object *obj, const char *const *allowed)
{
	const char *const *a;

	if (!json_object_is_type(obj, json_type_object))
		return cfg_fail(c, "%s: expected an object", where);
	json_object_object_foreach(obj, key, val) {
		(void)val;
		for (a = allowed; *a; a++)
			if (!strcmp(key, *a))
				break;
		if (!*a)
			return cfg_fail(c, "%s.%s is not supported by gpin-vmm",
					where, key);
	}
	return 0;
}

static json_object *get(json_object *obj, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(obj, key, &v) &&
	       !json_object_is_type(v, json_type_null) ? v : NULL;
}

static int get_u64(struct cfg_ctx *c, json_object *obj, const char *where,
		   const char *key, uint64_t *out)
{
	json_object *v = get(obj, key);
	int64_t i;

	if (!v)
		return 1;	/* absent */
	if (!json_object_is_type(v, json_type_int))
		return cfg_fail(c, "%s.%s: expected an integer", where, key);
	errno = 0;
	i = json_object_get_int64(v);
	if (i < 0 || errno)
		return cfg_fail(c, "%s.%s: out of range", where, key);
	*out = i;
	return 0;
}

/* A string into a @size-byte field of the config; 1 when absent. */
static int get_string(struct cfg_ctx *c, json_object *obj, const char *where,
		      const char *key, char *out, size_t size)
{
	json_object *v = get(obj, key);

	if (!v)
		return 1;
	if (!json_object_is_type(v, json_type_string) ||
	    !json_object_get_string_len(v))
		return cfg_fail(c, "%s.%s: expected a non-empty string", where,
				key);
	if ((size_t)json_object_get_string_len(v) >= size)
		return cfg_fail(c, "%s.%s: longer than %zu bytes", where, key,
				size - 1);
	strcpy(out, json_object_get_string(v));
	return 0;
}

static int parse_cpus(struct cfg_ctx *c, json_object *cpus,
		      struct api_vm_config *cfg)
{
	static const char *const keys[] = { "boot_vcpus", "max_vcpus", NULL };
	uint64_t boot = 1, max;
	int r;

	if (check_keys(c, "cpus", cpus, keys))
		return -1;
	if ((r = get_u64(c, cpus, "cpus", "boot_vcpus", &boot)) < 0)
		return -1;
	if (boot < 1 || boot > VM_CPUS_MAX)
		return cfg_fail(c, "cpus.boot_vcpus: %llu, expected 1 to %d",
				(unsigned long long)boot, VM_CPUS_MAX);
	max = boot;
	if (get_u64(c, cpus, "cpus", "max_vcpus", &max) < 0)
		return -1;
	if (max != boot)
		return cfg_fail(c, "cpus.max_vcpus %llu != boot_vcpus %llu: "
				"gpin-vmm has no vCPU hotplug",
				(unsigned long long)max,
				(unsigned long long)boot);
	cfg->vm.ncpus = boot;
	return 0;
}

static int parse_memory(struct cfg_ctx *c, json_object *mem,
			struct api_vm_config *cfg)
{
	static const char *const keys[] = { "size", NULL };
	uint64_t size;
	int r;

	if (check_keys(c, "memory", mem, keys))
		return -1;
	r = get_u64(c, mem, "memory", "size", &size);
	if (r)
		return r < 0 ? -1 : cfg_fail(c, "memory.size is required");
	if (size < GUEST_MEM_MIN || size > GUEST_MEM_MAX)
		return cfg_fail(c, "memory.size: %llu bytes; gpin-vmm takes "
				"%llu MiB to %llu GiB", (unsigned long long)size,
				(unsigned long long)(GUEST_MEM_MIN >> 20),
				(unsigned long long)(GUEST_MEM_MAX >> 30));
	cfg->vm.mem_size = size;
	return 0;
}

/* {"path": …} objects of the older API: kernel, initramfs. */
static int parse_path_obj(struct cfg_ctx *c, json_object *obj,
			  const char *where, char *out, size_t size)
{
	static const char *const keys[] = { "path", NULL };
	int r;

	if (check_keys(c, where, obj, keys))
		return -1;
	r = get_string(c, obj, where, "path", out, size);
	return r > 0 ? cfg_fail(c, "%s.path is required", where) : r;
}

static int parse_payload(struct cfg_ctx *c, json_object *p,
			 struct api_vm_config *cfg)
{
	static const char *const keys[] = { "kernel", "cmdline", "initramfs",
					    NULL };
	struct vm_config *vm = &cfg->vm;
	int r;

	if (check_keys(c, "payload", p, keys))
		return -1;
	if (get_string(c, p, "payload", "kernel", vm->kernel,
		       sizeof(vm->kernel)) < 0 ||
	    get_string(c, p, "payload", "initramfs", vm->initrd,
		       sizeof(vm->initrd)) < 0)
		return -1;
	r = get_string(c, p, "payload", "cmdline", vm->cmdline,
		       sizeof(vm->cmdline));
	if (r < 0)
		return -1;
	cfg->cmdline_given |= r == 0;
	return 0;
}

static int parse_disks(struct cfg_ctx *c, json_object *disks,
		       struct api_vm_config *cfg)
{
	static const char *const keys[] = { "path", "readonly", "direct",
					    "num_queues", "id", NULL };
	size_t i, n;

	if (!json_object_is_type(disks, json_type_array))
		return cfg_fail(c, "disks: expected an array");
	n = json_object_array_length(disks);
	if (n > VM_DISKS_MAX)
		return cfg_fail(c, "disks: %zu; gpin-vmm serves %d", n,
				VM_DISKS_MAX);
	for (i = 0; i < n; i++) {
		json_object *d = json_object_array_get_idx(disks, i), *v;
		struct disk_config *disk = &cfg->vm.disks[i];
		uint64_t q = 0;
		int r;

		if (check_keys(c, "disks[]", d, keys))
			return -1;
		disk_config__init(disk);
		cfg->vm.ndisks++;
		r = get_string(c, d, "disks[]", "path", disk->path,
			       sizeof(disk->path));
		if (r)
			return r < 0 ? -1 : cfg_fail(c, "disks[%zu].path is "
						     "required", i);
		v = get(d, "readonly");
		if (v && !json_object_is_type(v, json_type_boolean))
			return cfg_fail(c, "disks[%zu].readonly: expected a "
					"boolean", i);
		disk->ro = v && json_object_get_boolean(v);
		v = get(d, "direct");
		if (v && !json_object_is_type(v, json_type_boolean))
			return cfg_fail(c, "disks[%zu].direct: expected a "
					"boolean", i);
		/* direct=false is honoured as direct I/O too: gpin-vmm has no other. */
		if (get_u64(c, d, "disks[]", "num_queues", &q) < 0)
			return -1;
		if (q > DISK_QUEUES_MAX)
			return cfg_fail(c, "disks[%zu].num_queues: at most %d", i,
					DISK_QUEUES_MAX);
		disk->queues = q;
	}
	return 0;
}

/*
 * gpin-vmm has one UART: on a PTY when serial or console asks for one,
 * else on stdout when one asks for "Tty", else nowhere.
 */
static enum vm_console console_of(const struct api_vm_config *cfg)
{
	if (cfg->serial == API_CONSOLE_PTY || cfg->console == API_CONSOLE_PTY)
		return VM_CONSOLE_PTY;
	if (cfg->serial == API_CONSOLE_TTY || cfg->console == API_CONSOLE_TTY)
		return VM_CONSOLE_STDOUT;
	return VM_CONSOLE_OFF;
}

static int parse_console(struct cfg_ctx *c, json_object *obj,
			 const char *where, enum api_console_mode *mode)
{
	static const char *const keys[] = { "mode", "file", NULL };
	json_object *m;
	const char *s;

	if (check_keys(c, where, obj, keys))
		return -1;
	m = get(obj, "mode");
	if (!m || !json_object_is_type(m, json_type_string))
		return cfg_fail(c, "%s.mode: expected a string", where);
	s = json_object_get_string(m);
	if (!strcmp(s, "Pty"))
		*mode = API_CONSOLE_PTY;
	else if (!strcmp(s, "Tty"))
		*mode = API_CONSOLE_TTY;
	else if (!strcmp(s, "Off") || !strcmp(s, "Null"))
		*mode = API_CONSOLE_OFF;
	else
		return cfg_fail(c, "%s.mode '%s' is not supported by gpin-vmm "
				"(Pty, Tty, Null, Off)", where, s);
	if (get(obj, "file"))
		return cfg_fail(c, "%s.file is not supported by gpin-vmm", where);
	return 0;
}

int api__parse_vm_config(const char *body, size_t len,
			 struct api_vm_config *cfg, char *err, size_t errlen)
{
	static const char *const keys[] = { "cpus", "memory", "payload",
		"kernel", "cmdline", "initramfs", "disks", "serial",
		"console", NULL };
	struct cfg_ctx c = { .err = err, .errlen = errlen };
	struct json_tokener *tok;
	json_object *root, *v;
	int ret = -1;

	*cfg = (struct api_vm_config) {
		.serial = API_CONSOLE_OFF,
		.console = API_CONSOLE_TTY,
	};
	vm_config__init(&cfg->vm);
	tok = json_tokener_new();
	if (!tok)
		return cfg_fail(&c, "out of memory");
	root = len ? json_tokener_parse_ex(tok, body, (int)len) : NULL;
	if (!root) {
		enum json_tokener_error e = json_tokener_get_error(tok);

		json_tokener_free(tok);
		return cfg_fail(&c, "malformed JSON: %s", len ?
				json_tokener_error_desc(e) : "empty body");
	}
	if (json_tokener_get_parse_end(tok) < len) {
		cfg_fail(&c, "malformed JSON: data after the object");
		goto out;
	}
	if (check_keys(&c, "vm.create", root, keys))
		goto out;
	if ((v = get(root, "cpus")) && parse_cpus(&c, v, cfg))
		goto out;
	if ((v = get(root, "memory")) && parse_memory(&c, v, cfg))
		goto out;
	if ((v = get(root, "payload")) && parse_payload(&c, v, cfg))
		goto out;
	if ((v = get(root, "kernel")) &&
	    parse_path_obj(&c, v, "kernel", cfg->vm.kernel,
			   sizeof(cfg->vm.kernel)))
		goto out;
	if ((v = get(root, "initramfs")) &&
	    parse_path_obj(&c, v, "initramfs", cfg->vm.initrd,
			   sizeof(cfg->vm.initrd)))
		goto out;
	if ((v = get(root, "cmdline"))) {
		static const char *const ckeys[] = { "args", NULL };
		int r;

		if (check_keys(&c, "cmdline", v, ckeys))
			goto out;
		r = get_string(&c, v, "cmdline", "args", cfg->vm.cmdline,
			       sizeof(cfg->vm.cmdline));
		if (r < 0)
			goto out;
		cfg->cmdline_given |= r == 0;
	}
	if ((v = get(root, "disks")) && parse_disks(&c, v, cfg))
		goto out;
	if ((v = get(root, "serial")) &&
	    parse_console(&c, v, "serial", &cfg->serial))
		goto out;
	if ((v = get(root, "console")) &&
	    parse_console(&c, v, "console", &cfg->console))
		goto out;
	if (!cfg->vm.kernel[0]) {
		cfg_fail(&c, "no kernel (payload.kernel or kernel.path): "
			 "gpin-vmm boots a bzImage directly");
		goto out;
	}
	cfg->vm.console = console_of(cfg);
	ret = 0;
out:
	json_object_put(root);
	json_tokener_free(tok);
	return ret;
}

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
