// SPDX-License-Identifier: GPL-2.0-only
/*
 * config/host_defaults.c: /etc/gpin/vmm.conf, its errors (file:line), and
 * which wins: what a route says, then the file, then gpin-vmm's default.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/apply.h"
#include "config/domain.h"
#include "config/host_defaults.h"
#include "options.h"
#include "unit.h"

static int parse(struct host_defaults *h, const char *text, char *err)
{
	memset(h, 0, sizeof(*h));
	return host_defaults__parse(h, text, strlen(text), "vmm.conf", err,
				    256);
}

START_TEST(test_parse)
{
	struct host_defaults h;
	char err[256] = "";

	ck_assert_msg(!parse(&h, "# gpin-vmm's host defaults\n"
			     "\n"
			     "pin = \"fast\"   # who pins\n"
			     "  service=iothread\n"
			     "transport = \"pci\"\n", err), "%s", err);
	ck_assert_int_eq(h.pin, DISK_PIN_FAST);
	ck_assert_uint_eq(h.pin_line, 3);
	ck_assert_int_eq(h.io, DISK_IO_IOTHREAD);
	ck_assert_uint_eq(h.io_line, 4);
	ck_assert_int_eq(h.transport, DISK_TRANSPORT_PCI);
	ck_assert_uint_eq(h.transport_line, 5);
	ck_assert_msg(!parse(&h, "pin = locked", err), "%s", err);
	ck_assert_int_eq(h.pin, DISK_PIN_LOCKED);
	ck_assert_uint_eq(h.io_line, 0);	/* not set */
	ck_assert_msg(!parse(&h, "", err), "%s", err);
	ck_assert_msg(!parse(&h, "pin = kernel\r\n", err), "%s", err);
	ck_assert_int_eq(h.pin, DISK_PIN_KERNEL);
	ck_assert_msg(!parse(&h, "pin = \"registered\"\n", err), "%s", err);
	ck_assert_int_eq(h.pin, DISK_PIN_REGISTERED);
}
END_TEST

static const struct {
	const char *text;
	const char *expect;
} bad[] = {
	{ "pin fast\n", "vmm.conf:1: expected 'key = value'" },
	{ "\n\npin = turbo\n",
	  "vmm.conf:3: pin = 'turbo': expected fast, locked, registered or kernel" },
	{ "pin = Registered", "pin = 'Registered'" },
	{ "service = vcpus", "vmm.conf:1: service = 'vcpus': expected vcpu or iothread" },
	{ "transport = isa", "vmm.conf:1: transport = 'isa': expected mmio or pci" },
	{ "queues = 4", "vmm.conf:1: unknown key 'queues'" },
	{ "pin = fast\npin = locked", "vmm.conf:2: pin is set twice (first on line 1)" },
	{ "pin = \"fast", "vmm.conf:1: pin: unterminated quote" },
	{ "pin = ", "vmm.conf:1: pin = '': expected" },
	{ "pin = \"\"", "vmm.conf:1: pin = '': expected" },
	{ "Pin = fast", "unknown key 'Pin'" },
	{ "pin = FAST", "pin = 'FAST'" },
};

START_TEST(test_parse_rejects)
{
	struct host_defaults h;
	char err[256] = "";

	ck_assert_int_eq(parse(&h, bad[_i].text, err), -1);
	ck_assert_msg(strstr(err, bad[_i].expect), "[%d] '%s' lacks '%s'", _i,
		      err, bad[_i].expect);
}
END_TEST

START_TEST(test_load)
{
	char path[] = "/tmp/gpin-vmm-conf.XXXXXX", err[512] = "";
	struct host_defaults h;
	FILE *f;
	int fd;

	/* No file at the default path: no defaults, no error. */
	ck_assert_int_eq(host_defaults__load(&h, "/nonexistent/vmm.conf", false,
					     err, sizeof(err)), 0);
	ck_assert(!h.found);
	/* One that GPIN_VMM_CONF names must exist. */
	ck_assert_int_eq(host_defaults__load(&h, "/nonexistent/vmm.conf", true,
					     err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "GPIN_VMM_CONF=/nonexistent/vmm.conf"));
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	fputs("pin = fast\nbogus\n", f);
	fclose(f);
	ck_assert_int_eq(host_defaults__load(&h, path, true, err, sizeof(err)),
			 -1);
	ck_assert_msg(strstr(err, ":2: expected 'key = value'") &&
		      !strncmp(err, path, strlen(path)), "%s", err);
	f = fopen(path, "w");
	fputs("pin = fast\n", f);
	fclose(f);
	ck_assert_int_eq(host_defaults__load(&h, path, false, err, sizeof(err)),
			 0);
	ck_assert(h.found);
	ck_assert_str_eq(h.path, path);
	ck_assert_int_eq(h.pin, DISK_PIN_FAST);
	unlink(path);
}
END_TEST

START_TEST(test_path)
{
	unsetenv(HOST_DEFAULTS_ENV);
	ck_assert_str_eq(host_defaults__path(), "/etc/gpin/vmm.conf");
	setenv(HOST_DEFAULTS_ENV, "", 1);
	ck_assert_str_eq(host_defaults__path(), "/etc/gpin/vmm.conf");
	setenv(HOST_DEFAULTS_ENV, "/srv/vmm.conf", 1);
	ck_assert_str_eq(host_defaults__path(), "/srv/vmm.conf");
	unsetenv(HOST_DEFAULTS_ENV);
}
END_TEST

/* The command line: a --disk word wins, the file fills the rest. */
START_TEST(test_apply_command_line)
{
	char *argv[] = { "gpin-vmm", "-k", "bz", "-d", "a", "-d",
			 "b,pin=kernel,service=vcpu,transport=mmio", NULL };
	struct host_defaults h;
	struct vm_options o;
	char err[256];

	ck_assert_int_eq(options__parse(&o, 7, argv, err, sizeof(err)), 0);
	ck_assert_int_eq(o.vm.disks[0].pin, DISK_PIN_DEFAULT);
	ck_assert_int_eq(o.vm.disks[0].pin_from, CONFIG_FROM_DEFAULT);
	/* the built-in transport is pci: the file's mmio must show */
	ck_assert_int_eq(o.vm.disks[0].transport, DISK_TRANSPORT_PCI);
	ck_assert_int_eq(parse(&h, "pin = fast\nservice = iothread\n"
			       "transport = mmio\n", err), 0);
	host_defaults__apply(&h, &o.vm);
	ck_assert_int_eq(o.vm.disks[0].pin, DISK_PIN_FAST);
	ck_assert_int_eq(o.vm.disks[0].pin_from, CONFIG_FROM_HOST);
	ck_assert_int_eq(o.vm.disks[0].io, DISK_IO_IOTHREAD);
	ck_assert_int_eq(o.vm.disks[0].transport, DISK_TRANSPORT_MMIO);
	ck_assert_int_eq(o.vm.disks[1].pin, DISK_PIN_KERNEL);
	ck_assert_int_eq(o.vm.disks[1].pin_from, CONFIG_FROM_ROUTE);
	ck_assert_int_eq(o.vm.disks[1].io, DISK_IO_VCPU);
	ck_assert_int_eq(o.vm.disks[1].transport, DISK_TRANSPORT_MMIO);
	/* Without a file, the built-in defaults stay. */
	ck_assert_int_eq(options__parse(&o, 5, argv, err, sizeof(err)), 0);
	memset(&h, 0, sizeof(h));
	host_defaults__apply(&h, &o.vm);
	ck_assert_int_eq(o.vm.disks[0].pin, DISK_PIN_DEFAULT);
	ck_assert_int_eq(o.vm.disks[0].io, DISK_IO_VCPU);
}
END_TEST

#define DOMAIN_HEAD "<domain type='kvm' xmlns:gpin='" DOMAIN_GPIN_NS "'>" \
	"<name>t</name>"
#define DOMAIN_TAIL "<memory unit='MiB'>256</memory><os><type>hvm</type>" \
	"<kernel>/k</kernel></os><devices>" \
	"<disk type='file' device='disk'><source file='/a'/>" \
	"<target dev='vda'/></disk>" \
	"<disk type='file' device='disk'><driver name='qemu' io='io_uring'/>" \
	"<source file='/b'/><target dev='vdb'/></disk>" \
	"<disk type='file' device='disk'><source file='/c'/>" \
	"<target dev='vdc'/><address type='virtio-mmio'/></disk>" \
	"</devices></domain>"

/* A domain: its metadata and <driver io> win, the file fills the rest. */
START_TEST(test_apply_domain)
{
	static const char xml[] = DOMAIN_HEAD "<metadata><gpin:vmm>"
		"<gpin:disk target='vdc' pin='locked' service='vcpu'/>"
		"</gpin:vmm></metadata>" DOMAIN_TAIL;
	struct host_defaults h;
	struct vm_config cfg;
	struct domain d;
	char err[512] = "";

	ck_assert_msg(!domain__parse(&d, xml, strlen(xml), "t.xml", NULL, err,
				     sizeof(err)), "%s", err);
	vm_config__init(&cfg);
	ck_assert_int_eq(config__apply_domain(&d, &cfg, err, sizeof(err)), 0);
	/* the domain route's own default pin is kernel */
	ck_assert_int_eq(cfg.disks[0].pin, DISK_PIN_KERNEL);
	ck_assert_int_eq(cfg.disks[0].pin_from, CONFIG_FROM_DEFAULT);
	ck_assert_int_eq(parse(&h, "pin = fast\nservice = iothread\n"
			       "transport = pci\n", err), 0);
	host_defaults__apply(&h, &cfg);
	ck_assert_int_eq(cfg.disks[0].pin, DISK_PIN_FAST);	/* the file */
	ck_assert_int_eq(cfg.disks[0].io, DISK_IO_IOTHREAD);
	ck_assert_int_eq(cfg.disks[0].transport, DISK_TRANSPORT_PCI);
	ck_assert_int_eq(cfg.disks[1].pin, DISK_PIN_KERNEL);	/* io_uring */
	ck_assert_int_eq(cfg.disks[1].pin_from, CONFIG_FROM_ROUTE);
	ck_assert_int_eq(cfg.disks[2].pin, DISK_PIN_LOCKED);	/* metadata */
	ck_assert_int_eq(cfg.disks[2].io, DISK_IO_VCPU);
	ck_assert_int_eq(cfg.disks[2].transport, DISK_TRANSPORT_MMIO);
	domain__free(&d);
}
END_TEST

/*
 * pin=registered on each route: the file's default for a command-line
 * disk and for a domain's, a domain's metadata; --print-config says it.
 */
START_TEST(test_registered_routes)
{
	static const char xml[] = DOMAIN_HEAD "<metadata><gpin:vmm>"
		"<gpin:disk target='vdc' pin='registered'/>"
		"</gpin:vmm></metadata>" DOMAIN_TAIL;
	char *argv[] = { "gpin-vmm", "-k", "bz", "-d", "a", NULL };
	char *text = NULL, err[512] = "";
	struct host_defaults h;
	struct vm_options o;
	struct vm_config cfg;
	struct domain d;
	size_t len = 0;
	FILE *out;

	ck_assert_int_eq(options__parse(&o, 5, argv, err, sizeof(err)), 0);
	ck_assert_int_eq(parse(&h, "pin = registered\n", err), 0);
	host_defaults__apply(&h, &o.vm);
	vm_config__resolve(&o.vm);
	ck_assert_int_eq(o.vm.disks[0].pin, DISK_PIN_REGISTERED);
	ck_assert_int_eq(o.vm.disks[0].pin_from, CONFIG_FROM_HOST);
	ck_assert_msg(!domain__parse(&d, xml, strlen(xml), "t.xml", NULL, err,
				     sizeof(err)), "%s", err);
	vm_config__init(&cfg);
	ck_assert_int_eq(config__apply_domain(&d, &cfg, err, sizeof(err)), 0);
	ck_assert_int_eq(cfg.disks[2].pin, DISK_PIN_REGISTERED);
	ck_assert_int_eq(cfg.disks[2].pin_from, CONFIG_FROM_ROUTE);
	ck_assert_int_eq(cfg.disks[0].pin, DISK_PIN_KERNEL);
	out = open_memstream(&text, &len);
	config__print(out, &cfg, NULL, &d);
	fclose(out);
	ck_assert_msg(strstr(text, "disk vdc: file /c, io=default, queues=one "
			     "per vCPU, pin=registered, service=vcpu, "
			     "transport=mmio, irq_hold=auto; from: pin domain"),
		      "%s", text);
	free(text);
	domain__free(&d);
}
END_TEST

/*
 * --print-config's text for command line @argv (@argc words) with the
 * host file /etc/gpin/vmm.conf holding @conf; the caller frees it.
 */
static char *print_with_file(int argc, char **argv, const char *conf)
{
	char *text = NULL;
	struct host_defaults h;
	struct vm_options o;
	char err[256];
	size_t len = 0;
	FILE *out;

	ck_assert_int_eq(options__parse(&o, argc, argv, err, sizeof(err)), 0);
	ck_assert_int_eq(parse(&h, conf, err), 0);
	strcpy(h.path, "/etc/gpin/vmm.conf");
	h.found = true;
	host_defaults__apply(&h, &o.vm);
	out = open_memstream(&text, &len);
	config__print(out, &o.vm, &h, NULL);
	fclose(out);
	return text;
}

/* --print-config names the source of each disk setting. */
START_TEST(test_print)
{
	char *argv[] = { "gpin-vmm", "-k", "bz", "-d", "a,service=vcpu", NULL };
	char *text = print_with_file(5, argv, "\npin = fast\n");

	ck_assert_msg(strstr(text, "host defaults: /etc/gpin/vmm.conf, "
			     "pin=fast (line 2)\n"), "%s", text);
	ck_assert_msg(strstr(text, "disk blk0: a, queues=one per vCPU, "
			     "pin=fast, service=vcpu, transport=pci, "
			     "irq_hold=auto; from: "
			     "pin /etc/gpin/vmm.conf:2, service command line, "
			     "transport default\n"), "%s", text);
	free(text);
}
END_TEST

/* ... pin=registered from the command line and from the file alike. */
START_TEST(test_print_registered)
{
	char *argv[] = { "gpin-vmm", "-k", "bz", "-d", "a,pin=registered",
			 "-d", "b", NULL };
	char *text = print_with_file(7, argv, "pin = registered\n");

	ck_assert_msg(strstr(text, "host defaults: /etc/gpin/vmm.conf, "
			     "pin=registered (line 1)\n"), "%s", text);
	ck_assert_msg(strstr(text, "disk blk0: a, queues=one per vCPU, "
			     "pin=registered, service=vcpu, transport=pci, "
			     "irq_hold=auto; from: pin command line, "), "%s",
		      text);
	ck_assert_msg(strstr(text, "disk blk1: b, queues=one per vCPU, "
			     "pin=registered, service=vcpu, transport=pci, "
			     "irq_hold=auto; from: pin /etc/gpin/vmm.conf:1, "),
		      "%s", text);
	free(text);
}
END_TEST

static Suite *host_defaults_suite(void)
{
	Suite *s = suite_create("host_defaults");
	TCase *tc = tcase_create("file");

	tcase_add_test(tc, test_parse);
	tcase_add_loop_test(tc, test_parse_rejects, 0,
			    sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_load);
	tcase_add_test(tc, test_path);
	suite_add_tcase(s, tc);
	tc = tcase_create("apply");
	tcase_add_test(tc, test_apply_command_line);
	tcase_add_test(tc, test_apply_domain);
	tcase_add_test(tc, test_print);
	tcase_add_test(tc, test_print_registered);
	tcase_add_test(tc, test_registered_routes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(host_defaults_suite());
}
