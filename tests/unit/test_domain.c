// SPDX-License-Identifier: GPL-2.0-only
/*
 * config/domain.c: libvirt domain XML → struct domain, one test per
 * rejection.  The schema cases run against libvirt's installed schema
 * (scripts/build installs it); without it they are skipped, loudly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/apply.h"
#include "config/domain.h"
#include "unit.h"

#define KERNEL	"<os><type arch='x86_64'>hvm</type><kernel>/boot/bz</kernel></os>"
#define MEM	"<memory unit='MiB'>256</memory>"
#define DOM(body) "<domain type='kvm'><name>t</name>" body "</domain>"

static const char *schema(void)
{
	const char *s = domain__schema_path();

	return access(s, R_OK) ? NULL : s;
}

static int parse(struct domain *d, const char *xml, const char *rng,
		 char *err)
{
	err[0] = '\0';
	return domain__parse(d, xml, strlen(xml), "t.xml", rng, err, 512);
}

START_TEST(test_minimal)
{
	struct domain d;
	char err[512];

	ck_assert_msg(!parse(&d, DOM(MEM KERNEL), schema(), err), "%s", err);
	ck_assert_str_eq(d.name, "t");
	ck_assert_str_eq(d.kernel, "/boot/bz");
	ck_assert_ptr_null(d.initrd);
	ck_assert_ptr_null(d.cmdline);
	ck_assert_uint_eq(d.vcpus, 1);
	ck_assert_uint_eq(d.mem_bytes, 256ULL << 20);
	ck_assert_uint_eq(d.ndisks, 0);
	ck_assert(!d.mem_locked);
	ck_assert_int_eq(d.console, DOMAIN_CONSOLE_STDIO);
	domain__free(&d);
}
END_TEST

static const char full_xml[] =
"<domain type='kvm' xmlns:gpin='" DOMAIN_GPIN_NS "'>\n"
"  <name>full</name>\n"
"  <metadata>\n"
"    <other:thing xmlns:other='https://example.org/x'/>\n"
"    <gpin:vmm><gpin:disk target='vdb' pin='kernel' service='iothread'/></gpin:vmm>\n"
"  </metadata>\n"
"  <memory unit='GiB'>1</memory>\n"
"  <currentMemory unit='MiB'>1024</currentMemory>\n"
"  <vcpu placement='static'>4</vcpu>\n"
"  <memoryBacking><locked/></memoryBacking>\n"
"  <os><type arch='x86_64'>hvm</type><kernel>/k</kernel><initrd>/i</initrd>"
"<cmdline>console=ttyS0 quiet</cmdline></os>\n"
"  <features><acpi/><apic/></features>\n"
"  <clock offset='utc'/>\n"
"  <on_poweroff>destroy</on_poweroff><on_reboot>destroy</on_reboot>"
"<on_crash>destroy</on_crash>\n"
"  <devices>\n"
"    <emulator>/usr/bin/gpin-vmm</emulator>\n"
"    <disk type='file' device='disk'><driver name='qemu' type='raw' "
"cache='none' io='io_uring' queues='4'/><source file='/img/a'/>"
"<target dev='vda' bus='virtio'/><readonly/><address type='pci' "
"domain='0x0000' bus='0x00' slot='0x04' function='0x0'/></disk>\n"
"    <disk type='block' device='disk'><driver name='qemu' type='raw' "
"cache='none' io='threads' event_idx='off'/><source dev='/dev/null'/>"
"<target dev='vdb' bus='virtio'/><iotune><total_bytes_sec>1048576"
"</total_bytes_sec><total_iops_sec>300</total_iops_sec></iotune>"
"<address type='virtio-mmio'/></disk>\n"
"    <serial type='pty'><target port='0'/></serial>\n"
"    <console type='pty'><target type='serial' port='0'/></console>\n"
"  </devices>\n"
"</domain>\n";

START_TEST(test_full)
{
	struct domain d;
	char err[512];

	ck_assert_msg(!parse(&d, full_xml, schema(), err), "%s", err);
	ck_assert_uint_eq(d.mem_bytes, 1ULL << 30);
	ck_assert_uint_eq(d.vcpus, 4);
	ck_assert(d.mem_locked);
	ck_assert_str_eq(d.initrd, "/i");
	ck_assert_str_eq(d.cmdline, "console=ttyS0 quiet");
	ck_assert_str_eq(d.emulator, "/usr/bin/gpin-vmm");
	ck_assert_int_eq(d.console, DOMAIN_CONSOLE_PTY);
	ck_assert_uint_eq(d.ndisks, 2);
	ck_assert_int_eq(d.disks[0].type, DOMAIN_DISK_FILE);
	ck_assert_str_eq(d.disks[0].path, "/img/a");
	ck_assert_str_eq(d.disks[0].target, "vda");
	ck_assert(d.disks[0].readonly);
	ck_assert_int_eq(d.disks[0].aio, DOMAIN_AIO_IO_URING);
	ck_assert_uint_eq(d.disks[0].queues, 4);
	ck_assert_int_eq(d.disks[0].pin, DISK_PIN_KERNEL);
	ck_assert_int_eq(d.disks[0].service, DISK_IO_VCPU);
	ck_assert(!d.disks[0].no_event_idx);
	ck_assert(d.disks[1].no_event_idx);
	ck_assert_int_eq(d.disks[0].bus, DOMAIN_BUS_PCI);
	ck_assert_int_eq(d.disks[1].bus, DOMAIN_BUS_VIRTIO_MMIO);
	ck_assert_int_eq(d.disks[1].type, DOMAIN_DISK_BLOCK);
	ck_assert_str_eq(d.disks[1].path, "/dev/null");
	ck_assert(!d.disks[1].readonly);
	ck_assert_int_eq(d.disks[1].aio, DOMAIN_AIO_THREADS);
	ck_assert_int_eq(d.disks[1].service, DISK_IO_IOTHREAD);
	ck_assert_uint_eq(d.disks[0].iops, 0);
	ck_assert_uint_eq(d.disks[1].iops, 300);
	ck_assert_uint_eq(d.disks[1].bps, 1048576);
	domain__free(&d);
}
END_TEST

/* libvirt's units: KiB default, k/KiB binary, KB decimal, bytes. */
START_TEST(test_memory_units)
{
	static const struct {
		const char *xml;
		uint64_t bytes;
	} t[] = {
		{ DOM("<memory>262144</memory>" KERNEL), 256ULL << 20 },
		{ DOM("<memory unit='KiB'>262144</memory>" KERNEL), 256ULL << 20 },
		{ DOM("<memory unit='k'>262144</memory>" KERNEL), 256ULL << 20 },
		{ DOM("<memory unit='KB'>256000</memory>" KERNEL), 256000000ULL },
		{ DOM("<memory unit='M'>300</memory>" KERNEL), 300ULL << 20 },
		{ DOM("<memory unit='MB'>300</memory>" KERNEL), 300000000ULL },
		{ DOM("<memory unit='G'>2</memory>" KERNEL), 2ULL << 30 },
		{ DOM("<memory unit='GB'>2</memory>" KERNEL), 2000000000ULL },
		{ DOM("<memory unit='b'>134217728</memory>" KERNEL), 128ULL << 20 },
		{ DOM("<memory unit='bytes'>134217728</memory>" KERNEL), 128ULL << 20 },
		{ DOM("<memory unit='TiB'>0</memory>" KERNEL), 0 },
	};
	struct domain d;
	char err[512];
	unsigned int i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int ret = parse(&d, t[i].xml, schema(), err);

		if (!t[i].bytes) {
			ck_assert_int_eq(ret, -1);
			ck_assert_ptr_nonnull(strstr(err, "MiB to"));
			continue;
		}
		ck_assert_msg(!ret, "%s: %s", t[i].xml, err);
		ck_assert_uint_eq(d.mem_bytes, t[i].bytes);
		domain__free(&d);
	}
}
END_TEST

/* Bad input → -1 and a message that names the problem. */
static const struct {
	const char *xml;
	const char *expect;	/* in the message */
	bool schema;		/* caught by the schema (skip without it) */
} bad[] = {
	/* not XML */
	{ "<domain type='kvm'><name>t</name>", "t.xml:1:", false },
	{ "", "t.xml", false },
	{ "<domain type='kvm'><name>t</nam></domain>", "t.xml:1:", false },
	{ "<domain type='kvm'><!-- a -- b\n c --><name>t</name></domain>",
	  "Double hyphen", false },
	/* schema-invalid */
	{ DOM(MEM KERNEL "<vcpu>two</vcpu>"), "libvirt's schema", true },
	{ DOM("<memory unit='MiB'>-5</memory>" KERNEL), "libvirt's schema", true },
	{ DOM(MEM KERNEL "<bogus/>"), "libvirt's schema", true },
	{ "<domain type='nosuch'><name>t</name>" MEM KERNEL "</domain>",
	  "libvirt's schema", true },
	{ DOM(MEM KERNEL "<devices><disk type='file' device='disk'><source "
	  "file='/x'/><target dev='vda' bus='foo'/></disk></devices>"),
	  "libvirt's schema", true },
	/* valid for libvirt, not for gpin-vmm */
	{ "<domain type='qemu'><name>t</name>" MEM KERNEL "</domain>",
	  "type='qemu'", false },
	{ DOM(MEM KERNEL "<devices><interface type='user'/></devices>"),
	  "<devices><interface> is not supported", false },
	{ DOM(MEM KERNEL "<cpu mode='host-passthrough'/>"),
	  "<domain><cpu> is not supported", false },
	{ DOM(MEM KERNEL "<memoryBacking><hugepages/></memoryBacking>"),
	  "<memoryBacking><hugepages>", false },
	{ DOM(MEM "<os><type>hvm</type><kernel>/k</kernel><boot dev='hd'/></os>"),
	  "<os><boot> is not supported", false },
	{ DOM(MEM KERNEL "<on_reboot>restart</on_reboot>"),
	  "<on_reboot>restart</on_reboot>", false },
	{ DOM(MEM "<os><type>hvm</type></os>"), "<os><kernel> is required", false },
	{ DOM(MEM), "<os><kernel> is required", false },
	{ DOM(KERNEL), "<memory> is required", false },
	{ DOM(MEM KERNEL "<devices><disk type='file' device='disk'><source "
	  "file='/x'/><target dev='hda' bus='ide'/></disk></devices>"),
	  "unsupported disk bus", false },
	{ DOM(MEM KERNEL "<devices><disk type='file' device='disk'><source "
	  "file='/x'/><target dev='vda'/><address type='drive' controller='0' "
	  "bus='0' unit='0'/></disk></devices>"),
	  "controller", false },
	{ DOM(MEM KERNEL "<devices><disk type='file' device='disk'><source "
	  "file='/x'/><target dev='vda'/><address type='ccw'/></disk></devices>"),
	  "<address type='ccw'>: gpin-vmm's disks are on", false },
	{ DOM(MEM KERNEL "<devices><disk type='file' device='cdrom'><source "
	  "file='/x'/><target dev='vda'/></disk></devices>"),
	  "device='cdrom'", false },
	{ DOM(MEM KERNEL "<devices><disk type='network' device='disk'>"
	  "<source protocol='nbd' name='x'><host name='h'/></source>"
	  "<target dev='vda'/></disk></devices>"), "type='network'", false },
	{ DOM(MEM KERNEL "<devices><disk type='file' device='disk'><target "
	  "dev='vda'/></disk></devices>"), "has no <source>", false },
	{ DOM(MEM KERNEL "<devices><disk type='file' device='disk'><driver "
	  "name='qemu' cache='writeback'/><source file='/x'/><target "
	  "dev='vda'/></disk></devices>"), "cache='writeback'", false },
	{ DOM(MEM KERNEL "<devices><disk type='file' device='disk'><driver "
	  "name='qemu' type='qcow2'/><source file='/x'/><target "
	  "dev='vda'/></disk></devices>"), "type='qcow2'", false },
	{ DOM(MEM KERNEL "<devices><disk type='file' device='disk'><source "
	  "file='/x'/><target dev='vda'/><serial>x</serial></disk></devices>"),
	  "<disk><serial>", false },
	{ DOM(MEM KERNEL "<devices><disk type='file' device='disk'><source "
	  "file='/x'/><target dev='vda'/></disk><disk type='file' "
	  "device='disk'><source file='/y'/><target dev='vda'/></disk>"
	  "</devices>"), "two disks", false },
	{ DOM(MEM KERNEL "<devices><serial type='tcp'><source mode='bind' "
	  "host='h' service='1'/></serial></devices>"), "type='tcp'", false },
	{ DOM(MEM KERNEL "<devices><serial type='pty'/><serial type='pty'/>"
	  "</devices>"), "more than one <serial>", false },
	{ DOM(MEM KERNEL "<devices><serial type='pty'/><console type='stdio'/>"
	  "</devices>"), "same type", false },
	{ DOM(MEM KERNEL "<vcpu current='1'>2</vcpu>"), "current", false },
	{ DOM(MEM KERNEL "<vcpu>65</vcpu>"), "expected 1 to", false },
	{ DOM("<memory unit='MiB'>256</memory><currentMemory unit='MiB'>128"
	  "</currentMemory>" KERNEL), "balloon", false },
	{ DOM("<memory unit='EiB'>99999</memory>" KERNEL), "too large", false },
	{ DOM("<memory unit='KiB'>18446744073709551615</memory>" KERNEL),
	  "too large", false },
	{ DOM("<memory unit='MiB'>1</memory>" KERNEL), "MiB to", false },
	{ DOM("<memory unit='GiB'>65</memory>" KERNEL), "MiB to", false },
	/* gpin's metadata */
	{ "<domain type='kvm' xmlns:gpin='" DOMAIN_GPIN_NS "'><name>t</name>"
	  "<metadata><gpin:vmm><gpin:disk target='vdz' pin='fast'/></gpin:vmm>"
	  "</metadata>" MEM KERNEL "</domain>", "no such disk", false },
	{ "<domain type='kvm' xmlns:gpin='" DOMAIN_GPIN_NS "'><name>t</name>"
	  "<metadata><gpin:vmm><gpin:knob/></gpin:vmm></metadata>" MEM KERNEL
	  "</domain>", "<gpin:vmm><knob> is not known", false },
	{ "<domain type='kvm' xmlns:gpin='" DOMAIN_GPIN_NS "'><name>t</name>"
	  "<metadata><gpin:vmm><gpin:disk target='vda' pin='turbo'/></gpin:vmm>"
	  "</metadata>" MEM KERNEL "<devices><disk type='file' device='disk'>"
	  "<source file='/x'/><target dev='vda'/></disk></devices></domain>",
	  "pin='turbo'", false },
	{ "<domain type='kvm' xmlns:gpin='" DOMAIN_GPIN_NS "'><name>t</name>"
	  "<metadata><gpin:vmm><gpin:disk target='vda' pin='fast'/></gpin:vmm>"
	  "</metadata>" MEM KERNEL "<devices><disk type='file' device='disk'>"
	  "<driver name='qemu' io='io_uring'/><source file='/x'/><target "
	  "dev='vda'/></disk></devices></domain>", "io='io_uring'", false },
	{ "<domain type='kvm' xmlns:gpin='" DOMAIN_GPIN_NS "'><name>t</name>"
	  "<metadata><gpin:vmm><gpin:disk target='vda' pin='registered'/>"
	  "</gpin:vmm></metadata>" MEM KERNEL "<devices><disk type='file' "
	  "device='disk'><driver name='qemu' io='io_uring'/><source file='/x'/>"
	  "<target dev='vda'/></disk></devices></domain>",
	  "gpin:disk pin='registered' needs io='native'", false },
	{ "<domain type='kvm' xmlns:gpin='" DOMAIN_GPIN_NS "'><name>t</name>"
	  "<metadata><gpin:vmm><gpin:disk target='vda' pin='Registered'/>"
	  "</gpin:vmm></metadata>" MEM KERNEL "<devices><disk type='file' "
	  "device='disk'><source file='/x'/><target dev='vda'/></disk>"
	  "</devices></domain>",
	  "pin='Registered'>: expected fast, locked, registered or kernel",
	  false },
	{ "<domain type='kvm' xmlns:gpin='" DOMAIN_GPIN_NS "'><name>t</name>"
	  "<metadata><gpin:vmm><gpin:disk target='vda' service='vcpu'/></gpin:vmm>"
	  "</metadata>" MEM KERNEL "<devices><disk type='file' device='disk'>"
	  "<driver name='qemu' io='threads'/><source file='/x'/><target "
	  "dev='vda'/></disk></devices></domain>", "disagree", false },
	{ "<domain type='kvm' xmlns:gpin='" DOMAIN_GPIN_NS "'><name>t</name>"
	  "<metadata><gpin:vmm><gpin:test-exit-port port='1'/></gpin:vmm>"
	  "</metadata>" MEM KERNEL "</domain>", "port=", false },
	/* <iotune>: what gpin-vmm cannot limit is refused, not ignored */
	{ DOM(MEM KERNEL "<devices><disk type='file' device='disk'><source "
	  "file='/x'/><target dev='vda'/><iotune><read_iops_sec>5"
	  "</read_iops_sec></iotune></disk></devices>"), "read_iops_sec",
	  false },
	{ DOM(MEM KERNEL "<devices><disk type='file' device='disk'><source "
	  "file='/x'/><target dev='vda'/><iotune><total_iops_sec>0"
	  "</total_iops_sec></iotune></disk></devices>"), "expected 1 to",
	  false },
};

START_TEST(test_bad)
{
	struct domain d;
	char err[512];

	if (bad[_i].schema && !schema()) {
		fprintf(stderr, "test_bad[%d]: SKIP, no libvirt schema at %s\n",
			_i, domain__schema_path());
		return;
	}
	ck_assert_int_eq(parse(&d, bad[_i].xml, schema(), err), -1);
	ck_assert_msg(strstr(err, bad[_i].expect), "[%d] '%s' lacks '%s'", _i,
		      err, bad[_i].expect);
	ck_assert_ptr_null(strchr(err, '\n'));
	/* Nothing to free after a failure, and freeing again is harmless. */
	ck_assert_ptr_null(d.kernel);
	domain__free(&d);
}
END_TEST

START_TEST(test_no_schema_file)
{
	struct domain d;
	char err[512];

	ck_assert_int_eq(parse(&d, DOM(MEM KERNEL), "/nonexistent/domain.rng",
			       err), -1);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/domain.rng"));
}
END_TEST

START_TEST(test_check_host)
{
	char dir[] = "/tmp/gpin-domain-XXXXXX", file[64], err[512];
	struct domain d = { 0 };
	char path[80];
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/disk.img", dir);
	f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	d.ndisks = 1;
	d.disks[0] = (struct domain_disk) { .type = DOMAIN_DISK_FILE,
					    .path = file, .target = "vda" };
	ck_assert_int_eq(domain__check_host(&d, err, sizeof(err)), 0);
	/* A file declared as a block device, and the reverse. */
	d.disks[0].type = DOMAIN_DISK_BLOCK;
	ck_assert_int_eq(domain__check_host(&d, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not a block device"));
	d.disks[0].type = DOMAIN_DISK_FILE;
	d.disks[0].path = dir;
	ck_assert_int_eq(domain__check_host(&d, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
	snprintf(path, sizeof(path), "%s/missing.img", dir);
	d.disks[0].path = path;
	ck_assert_int_eq(domain__check_host(&d, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "No such file"));
	unlink(file);
	rmdir(dir);
}
END_TEST

/* <gpin:test-exit-port/>: the exit port for a test that boots a domain. */
START_TEST(test_test_exit_port)
{
	static const char xml[] =
		"<domain type='kvm' xmlns:gpin='" DOMAIN_GPIN_NS "'><name>t</name>"
		"<metadata><gpin:vmm><gpin:test-exit-port/></gpin:vmm>"
		"</metadata>" MEM KERNEL "</domain>";
	struct vm_config o;
	struct domain d;
	char err[512];

	ck_assert_msg(!parse(&d, xml, NULL, err), "%s", err);
	ck_assert(d.test_exit_port);
	vm_config__init(&o);
	ck_assert_int_eq(config__apply_domain(&d, &o, err, sizeof(err)), 0);
	ck_assert(o.test_exit_port);
	domain__free(&d);
	/* off without it; --test-exit-port (already in @o) stays on */
	ck_assert_msg(!parse(&d, DOM(MEM KERNEL), NULL, err), "%s", err);
	ck_assert(!d.test_exit_port);
	ck_assert_int_eq(config__apply_domain(&d, &o, err, sizeof(err)), 0);
	ck_assert(o.test_exit_port);
	domain__free(&d);
}
END_TEST

START_TEST(test_apply)
{
	struct vm_config o;
	struct domain d;
	char err[512];

	vm_config__init(&o);
	ck_assert_msg(!parse(&d, full_xml, NULL, err), "%s", err);
	ck_assert_int_eq(config__apply_domain(&d, &o, err, sizeof(err)), 0);
	ck_assert_str_eq(o.kernel, "/k");
	ck_assert_str_eq(o.initrd, "/i");
	ck_assert_str_eq(o.cmdline, "console=ttyS0 quiet");
	ck_assert_uint_eq(o.ncpus, 4);
	ck_assert_uint_eq(o.mem_size, 1ULL << 30);
	ck_assert(o.mem_locked);
	ck_assert_int_eq(o.console, VM_CONSOLE_PTY);
	ck_assert_uint_eq(o.ndisks, 2);
	ck_assert_str_eq(o.disks[0].path, "/img/a");
	ck_assert(o.disks[0].ro);
	ck_assert_uint_eq(o.disks[0].queues, 4);
	ck_assert_int_eq(o.disks[1].io, DISK_IO_IOTHREAD);
	ck_assert(!o.disks[0].no_event_idx);
	ck_assert(o.disks[1].no_event_idx);
	ck_assert_int_eq(o.disks[0].transport, DISK_TRANSPORT_PCI);
	ck_assert_int_eq(o.disks[1].transport, DISK_TRANSPORT_MMIO);
	ck_assert_uint_eq(o.disks[1].iops, 300);
	ck_assert_uint_eq(o.disks[1].bps, 1048576);
	ck_assert(!o.test_exit_port);
	domain__free(&d);
}
END_TEST

static Suite *domain_suite(void)
{
	Suite *s = suite_create("domain");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_minimal);
	tcase_add_test(tc, test_full);
	tcase_add_test(tc, test_memory_units);
	tcase_add_loop_test(tc, test_bad, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_no_schema_file);
	suite_add_tcase(s, tc);
	tc = tcase_create("host");
	tcase_add_test(tc, test_check_host);
	tcase_add_test(tc, test_apply);
	tcase_add_test(tc, test_test_exit_port);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(domain_suite());
}
