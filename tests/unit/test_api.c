// SPDX-License-Identifier: GPL-2.0-only
/*
 * api/request.c: the Cloud Hypervisor API subset against a fake backend,
 * one test per rejection (malformed JSON, unknown endpoint, wrong method,
 * wrong state), the state machine libvirt's ch driver walks, and the
 * counters a booted VM reports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "api/request.h"
#include "options.h"
#include "unit.h"

struct fake {
	int boots, stops, vmm_shutdowns;
	bool fail_boot;
	bool no_disks;
	unsigned int seen_ncpus;
	uint64_t seen_mem_size;
	enum vm_console seen_console;
};

static int fake_boot(void *opaque, const struct vm_config *cfg, char *err,
		     size_t errlen)
{
	struct fake *f = opaque;

	if (f->fail_boot) {
		snprintf(err, errlen, "no kernel here");
		return -1;
	}
	f->boots++;
	f->seen_ncpus = cfg->ncpus;
	f->seen_mem_size = cfg->mem_size;
	f->seen_console = cfg->console;
	return 0;
}

static void fake_stop(void *opaque)
{
	((struct fake *)opaque)->stops++;
}

static const char *fake_pty(void *opaque)
{
	return "/dev/pts/42";
}

static void fake_vmm_shutdown(void *opaque)
{
	((struct fake *)opaque)->vmm_shutdowns++;
}

/*
 * A VM with one 2-queue disk, as virtio_blk__counters() reports it (the
 * device's side is tests/unit/test_virtio_blk.c): queue 0 served a write,
 * a flush, a read, a read past the end and an unknown type.
 */
static void fake_counters(void *opaque, counter_fn fn, void *ctx)
{
	struct fake *f = opaque;

	if (f->no_disks)
		return;
	fn(ctx, "blk0-q0", "requests", 5);
	fn(ctx, "blk0-q0", "bytes", 1024);
	fn(ctx, "blk0-q0", "errors", 2);
	fn(ctx, "blk0-q1", "requests", 0);
	fn(ctx, "blk0-q1", "bytes", 5ULL << 40);	/* past 32 bits */
	fn(ctx, "blk0-q1", "errors", 0);
}

static const struct api_backend_ops fake_ops = {
	.boot = fake_boot,
	.stop = fake_stop,
	.pty_path = fake_pty,
	.counters = fake_counters,
	.vmm_shutdown = fake_vmm_shutdown,
};

static struct api api;
static struct fake fake;

static void setup(void)
{
	memset(&fake, 0, sizeof(fake));
	api__init(&api, &fake_ops, &fake);
}

static void teardown(void)
{
	api__free(&api);
}

/* What libvirt 9.0's ch driver sends for a 2-vCPU, 256 MiB domain. */
static const char libvirt_create[] =
	"{\"console\":{\"mode\":\"Pty\"},"
	"\"cpus\":{\"boot_vcpus\":2,\"max_vcpus\":2},"
	"\"memory\":{\"size\":268435456},"
	"\"kernel\":{\"path\":\"/boot/bz\"},"
	"\"cmdline\":{\"args\":\"console=ttyS0\"},"
	"\"disks\":[{\"path\":\"/img/a\",\"readonly\":true}]}";

static int req(const char *method, const char *ep, const char *body,
	       char **out)
{
	struct api_response r;
	char path[128];

	snprintf(path, sizeof(path), "%s%s", API_PREFIX, ep);
	api__handle(&api, method, path, body, body ? strlen(body) : 0, &r);
	if (out)
		*out = r.body;
	else
		free(r.body);
	return r.status;
}

/* Every error body is {"error": "..."} naming what went wrong. */
static void expect_error(const char *method, const char *ep, const char *body,
			 int status, const char *needle)
{
	json_object *o, *e;
	char *out = NULL;

	ck_assert_int_eq(req(method, ep, body, &out), status);
	ck_assert_ptr_nonnull(out);
	o = json_tokener_parse(out);
	ck_assert_ptr_nonnull(o);
	ck_assert(json_object_object_get_ex(o, "error", &e));
	ck_assert_msg(strstr(json_object_get_string(e), needle),
		      "'%s' lacks '%s'", json_object_get_string(e), needle);
	json_object_put(o);
	free(out);
}

START_TEST(test_libvirt_sequence)
{
	json_object *o, *v;
	char *out;

	ck_assert_int_eq(req("PUT", "vm.create", libvirt_create, NULL), 204);
	ck_assert_int_eq(api.state, API_VM_CREATED);
	ck_assert_uint_eq(api.cfg.vm.ncpus, 2);
	ck_assert_uint_eq(api.cfg.vm.mem_size, 256ULL << 20);
	ck_assert_str_eq(api.cfg.vm.kernel, "/boot/bz");
	ck_assert_str_eq(api.cfg.vm.cmdline, "console=ttyS0");
	ck_assert_uint_eq(api.cfg.vm.ndisks, 1);
	ck_assert(api.cfg.vm.disks[0].ro);
	ck_assert_int_eq(api.cfg.console, API_CONSOLE_PTY);
	ck_assert_int_eq(req("PUT", "vm.boot", "", NULL), 204);
	ck_assert_int_eq(fake.boots, 1);
	ck_assert_int_eq(api.state, API_VM_RUNNING);
	/* The VM the backend boots: one struct vm_config, the UART on a PTY. */
	ck_assert_uint_eq(fake.seen_ncpus, 2);
	ck_assert_uint_eq(fake.seen_mem_size, 256ULL << 20);
	ck_assert_int_eq(fake.seen_console, VM_CONSOLE_PTY);

	ck_assert_int_eq(req("GET", "vm.info", NULL, &out), 200);
	o = json_tokener_parse(out);
	ck_assert_ptr_nonnull(o);
	ck_assert(json_object_object_get_ex(o, "state", &v));
	ck_assert_str_eq(json_object_get_string(v), "Running");
	/* Where libvirt reads the console PTY. */
	ck_assert(json_object_object_get_ex(o, "config", &v));
	ck_assert(json_object_object_get_ex(v, "console", &v));
	ck_assert(json_object_object_get_ex(v, "file", &v));
	ck_assert_str_eq(json_object_get_string(v), "/dev/pts/42");
	json_object_put(o);
	free(out);

	ck_assert_int_eq(req("PUT", "vm.reboot", NULL, NULL), 204);
	ck_assert_int_eq(fake.stops, 1);
	ck_assert_int_eq(fake.boots, 2);
	ck_assert_int_eq(req("PUT", "vm.shutdown", NULL, NULL), 204);
	ck_assert_int_eq(fake.stops, 2);
	ck_assert_int_eq(api.state, API_VM_SHUTDOWN);
	/* A shut-down VM boots again from the same config. */
	ck_assert_int_eq(req("PUT", "vm.boot", NULL, NULL), 204);
	ck_assert_int_eq(req("PUT", "vmm.shutdown", NULL, NULL), 204);
	ck_assert_int_eq(fake.stops, 3);
	ck_assert_int_eq(fake.vmm_shutdowns, 1);
	ck_assert_int_eq(api.state, API_VM_NONE);
}
END_TEST

START_TEST(test_payload_form)
{
	ck_assert_int_eq(req("PUT", "vm.create", "{\"payload\":{\"kernel\":\"/k\","
			     "\"cmdline\":\"quiet\",\"initramfs\":\"/i\"}}",
			     NULL), 204);
	ck_assert_str_eq(api.cfg.vm.kernel, "/k");
	ck_assert_str_eq(api.cfg.vm.initrd, "/i");
	ck_assert_str_eq(api.cfg.vm.cmdline, "quiet");
	ck_assert(api.cfg.cmdline_given);
	ck_assert_uint_eq(api.cfg.vm.ncpus, 1);
	/* no serial, console "Tty" by default: output on stdout */
	ck_assert_int_eq(api.cfg.vm.console, VM_CONSOLE_STDOUT);
}
END_TEST

START_TEST(test_ping)
{
	json_object *o, *v;
	char *out;

	ck_assert_int_eq(req("GET", "vmm.ping", NULL, &out), 200);
	o = json_tokener_parse(out);
	ck_assert(json_object_object_get_ex(o, "version", &v));
	ck_assert_str_eq(json_object_get_string(v), "v" API_CH_VERSION);
	json_object_put(o);
	free(out);
}
END_TEST

START_TEST(test_unknown_endpoint)
{
	struct api_response r;

	expect_error("PUT", "vm.nosuch", "", 404, "vm.nosuch");
	/* Cloud Hypervisor has it, gpin-vmm does not. */
	expect_error("PUT", "vm.add-net", "{}", 404, "vm.add-net");
	api__handle(&api, "GET", "/", NULL, 0, &r);
	ck_assert_int_eq(r.status, 404);
	free(r.body);
	api__handle(&api, "GET", "/api/v2/vm.info", NULL, 0, &r);
	ck_assert_int_eq(r.status, 404);
	free(r.body);
}
END_TEST

START_TEST(test_wrong_method)
{
	expect_error("GET", "vm.create", NULL, 405, "PUT");
	expect_error("PUT", "vm.info", NULL, 405, "GET");
	expect_error("PUT", "vm.counters", NULL, 405, "GET");
	expect_error("POST", "vm.counters", "{}", 405, "GET");
	expect_error("DELETE", "vm.boot", NULL, 405, "PUT");
}
END_TEST

static const struct {
	const char *body;
	const char *expect;
} bad_create[] = {
	{ "", "empty body" },
	{ "{", "malformed JSON" },
	{ "{\"cpus\":}", "malformed JSON" },
	{ "{\"kernel\":{\"path\":\"/k\"}} trailing", "data after" },
	{ "[1,2]", "expected an object" },
	{ "{}", "no kernel" },
	{ "{\"kernel\":{\"path\":\"\"}}", "non-empty string" },
	{ "{\"kernel\":{\"path\":7}}", "non-empty string" },
	{ "{\"kernel\":{\"path\":\"/k\"},\"net\":[]}", "net is not supported" },
	{ "{\"kernel\":{\"path\":\"/k\"},\"memory\":{\"size\":-1}}", "out of range" },
	{ "{\"kernel\":{\"path\":\"/k\"},\"memory\":{\"size\":1024}}", "MiB to" },
	{ "{\"kernel\":{\"path\":\"/k\"},\"memory\":{\"size\":\"1G\"}}",
	  "expected an integer" },
	{ "{\"kernel\":{\"path\":\"/k\"},\"memory\":{\"size\":268435456,"
	  "\"hugepages\":true}}", "memory.hugepages" },
	{ "{\"kernel\":{\"path\":\"/k\"},\"cpus\":{\"boot_vcpus\":0}}", "expected 1" },
	{ "{\"kernel\":{\"path\":\"/k\"},\"cpus\":{\"boot_vcpus\":65}}", "expected 1" },
	{ "{\"kernel\":{\"path\":\"/k\"},\"cpus\":{\"boot_vcpus\":1,"
	  "\"max_vcpus\":4}}", "hotplug" },
	{ "{\"kernel\":{\"path\":\"/k\"},\"disks\":{}}", "expected an array" },
	{ "{\"kernel\":{\"path\":\"/k\"},\"disks\":[{\"readonly\":true}]}",
	  "path is required" },
	{ "{\"kernel\":{\"path\":\"/k\"},\"disks\":[{\"path\":\"/a\","
	  "\"readonly\":\"yes\"}]}", "boolean" },
	{ "{\"kernel\":{\"path\":\"/k\"},\"disks\":[{\"path\":\"/a\","
	  "\"vhost_user\":true}]}", "vhost_user" },
	{ "{\"kernel\":{\"path\":\"/k\"},\"serial\":{\"mode\":\"Socket\"}}",
	  "Socket" },
	{ "{\"kernel\":{\"path\":\"/k\"},\"serial\":{\"mode\":\"File\","
	  "\"file\":\"/x\"}}", "File" },
};

START_TEST(test_bad_create)
{
	expect_error("PUT", "vm.create", bad_create[_i].body, 400,
		     bad_create[_i].expect);
	ck_assert_int_eq(api.state, API_VM_NONE);
}
END_TEST

START_TEST(test_wrong_state)
{
	expect_error("PUT", "vm.boot", NULL, 409, "NotCreated");
	expect_error("GET", "vm.info", NULL, 409, "NotCreated");
	expect_error("GET", "vm.counters", NULL, 409, "NotCreated");
	expect_error("PUT", "vm.shutdown", NULL, 409, "NotCreated");
	expect_error("PUT", "vm.reboot", NULL, 409, "NotCreated");
	expect_error("PUT", "vm.pause", NULL, 409, "NotCreated");
	expect_error("PUT", "vm.resume", NULL, 409, "NotCreated");
	ck_assert_int_eq(req("PUT", "vm.create", libvirt_create, NULL), 204);
	expect_error("PUT", "vm.create", libvirt_create, 409, "Created");
	expect_error("PUT", "vm.shutdown", NULL, 409, "Created");
	/* Counters belong to a booted VM, as in Cloud Hypervisor. */
	expect_error("GET", "vm.counters", NULL, 409, "Created");
	ck_assert_int_eq(req("PUT", "vm.boot", NULL, NULL), 204);
	expect_error("PUT", "vm.boot", NULL, 409, "Running");
	expect_error("PUT", "vm.resume", NULL, 409, "Running");
	/* This backend cannot pause: 501, and the VM keeps running. */
	expect_error("PUT", "vm.pause", NULL, 501, "not implemented");
	ck_assert_int_eq(api.state, API_VM_RUNNING);
	ck_assert_int_eq(fake.boots, 1);
	ck_assert_int_eq(fake.stops, 0);
}
END_TEST

START_TEST(test_boot_failure)
{
	fake.fail_boot = true;
	ck_assert_int_eq(req("PUT", "vm.create", libvirt_create, NULL), 204);
	expect_error("PUT", "vm.boot", NULL, 500, "no kernel here");
	ck_assert_int_eq(api.state, API_VM_CREATED);
	fake.fail_boot = false;
	ck_assert_int_eq(req("PUT", "vm.boot", NULL, NULL), 204);
}
END_TEST

START_TEST(test_guest_stop_and_delete)
{
	ck_assert_int_eq(req("PUT", "vm.create", libvirt_create, NULL), 204);
	ck_assert_int_eq(req("PUT", "vm.boot", NULL, NULL), 204);
	api__guest_stopped(&api);
	ck_assert_int_eq(api.state, API_VM_SHUTDOWN);
	expect_error("PUT", "vm.shutdown", NULL, 409, "Shutdown");
	ck_assert_int_eq(req("PUT", "vm.boot", NULL, NULL), 204);
	/* Deleting a running VM stops it first. */
	ck_assert_int_eq(req("PUT", "vm.delete", NULL, NULL), 204);
	ck_assert_int_eq(fake.stops, 1);
	ck_assert_int_eq(api.state, API_VM_NONE);
	ck_assert_int_eq(req("PUT", "vm.create", libvirt_create, NULL), 204);
}
END_TEST

/* The counter @name of device @dev in a vm.counters body. */
static uint64_t counter(json_object *root, const char *dev, const char *name)
{
	json_object *d, *v;

	ck_assert_msg(json_object_object_get_ex(root, dev, &d), "no %s", dev);
	ck_assert_int_eq(json_object_object_length(d), 3);
	ck_assert_msg(json_object_object_get_ex(d, name, &v), "no %s.%s", dev,
		      name);
	ck_assert(json_object_is_type(v, json_type_int));
	return json_object_get_uint64(v);
}

START_TEST(test_counters)
{
	json_object *o;
	char *out;

	ck_assert_int_eq(req("PUT", "vm.create", libvirt_create, NULL), 204);
	ck_assert_int_eq(req("PUT", "vm.boot", NULL, NULL), 204);
	ck_assert_int_eq(req("GET", "vm.counters", NULL, &out), 200);
	o = json_tokener_parse(out);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(json_object_object_length(o), 2);
	ck_assert_uint_eq(counter(o, "blk0-q0", "requests"), 5);
	ck_assert_uint_eq(counter(o, "blk0-q0", "bytes"), 1024);
	ck_assert_uint_eq(counter(o, "blk0-q0", "errors"), 2);
	ck_assert_uint_eq(counter(o, "blk0-q1", "requests"), 0);
	ck_assert_uint_eq(counter(o, "blk0-q1", "bytes"), 5ULL << 40);
	ck_assert_uint_eq(counter(o, "blk0-q1", "errors"), 0);
	json_object_put(o);
	free(out);

	/* No disks: an empty object, not an error. */
	fake.no_disks = true;
	ck_assert_int_eq(req("GET", "vm.counters", NULL, &out), 200);
	ck_assert_str_eq(out, "{}");
	free(out);

	/* Once the guest stopped, the VM and its counters are gone. */
	api__guest_stopped(&api);
	expect_error("GET", "vm.counters", NULL, 409, "Shutdown");
}
END_TEST

/* --api-socket and --domain on the command line (vmm/options.c). */
START_TEST(test_options)
{
	char a0[] = "gpin-vmm", a1[] = "--api-socket", a2[] = "fd=3";
	char a3[] = "--kernel", a4[] = "bz", b2[] = "fd=x", c2[] = "path=/s";
	char d1[] = "--domain", d2[] = "d.xml";
	char *ok[] = { a0, a1, a2, NULL }, *clash[] = { a0, a1, a2, a3, a4, NULL };
	char *bad[] = { a0, a1, b2, NULL }, *path[] = { a0, a1, c2, NULL };
	char *dom[] = { a0, d1, d2, NULL }, *both[] = { a0, d1, d2, a1, a2, NULL };
	struct vm_options o;
	char err[256];

	ck_assert_int_eq(options__parse(&o, 3, ok, err, sizeof(err)), 0);
	ck_assert_int_eq(o.api_fd, 3);
	ck_assert_int_eq(options__parse(&o, 3, path, err, sizeof(err)), 0);
	ck_assert_str_eq(o.api_path, "/s");
	ck_assert_int_eq(o.api_fd, -1);
	ck_assert_int_eq(options__parse(&o, 3, bad, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "fd=N or path=P"));
	ck_assert_int_eq(options__parse(&o, 5, clash, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "drop --kernel"));
	ck_assert_int_eq(options__parse(&o, 3, dom, err, sizeof(err)), 0);
	ck_assert_str_eq(o.domain, "d.xml");
	ck_assert_int_eq(options__parse(&o, 5, both, err, sizeof(err)), -1);
}
END_TEST

static Suite *api_suite(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("requests");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_libvirt_sequence);
	tcase_add_test(tc, test_payload_form);
	tcase_add_test(tc, test_ping);
	tcase_add_test(tc, test_unknown_endpoint);
	tcase_add_test(tc, test_wrong_method);
	tcase_add_loop_test(tc, test_bad_create, 0,
			    sizeof(bad_create) / sizeof(bad_create[0]));
	tcase_add_test(tc, test_wrong_state);
	tcase_add_test(tc, test_boot_failure);
	tcase_add_test(tc, test_guest_stop_and_delete);
	tcase_add_test(tc, test_counters);
	suite_add_tcase(s, tc);
	tc = tcase_create("options");
	tcase_add_test(tc, test_options);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(api_suite());
}
