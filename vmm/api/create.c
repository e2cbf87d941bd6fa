// SPDX-License-Identifier: GPL-2.0-only
/*
 * vm.create's body → struct api_vm_config (a struct vm_config and what
 * vm.info says back): pure, and strict, since a setting the client asked
 * for and gpin-vmm dropped is worse than a refusal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "api/request.h"
#include "arch/x86/layout.h"
#include "log.h"

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
