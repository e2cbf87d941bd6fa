// SPDX-License-Identifier: GPL-2.0-only
/* --disk and the options around disks, value by value. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "libgpin.h"

#include "devices/virtio_blk.h"
#include "options.h"
#include "unit.h"
#include "vm.h"
#include "vm_pinned_ram.h"

/* ---- --disk ---------------------------------------------------------- */

START_TEST(test_disk_option)
{
	struct disk_config d;
	char err[256];

	ck_assert_int_eq(options__parse_disk("/dev/vdb", &d, err, sizeof(err)), 0);
	ck_assert_str_eq(d.path, "/dev/vdb");
	ck_assert(!d.ro);
	ck_assert_int_eq(d.pin, DISK_PIN_DEFAULT);
	ck_assert_int_eq(d.io, DISK_IO_VCPU);
	ck_assert_uint_eq(d.queues, 0);
	ck_assert_int_eq(options__parse_disk("img,ro,pin=kernel,queues=4,service=iothread",
					     &d, err, sizeof(err)), 0);
	ck_assert_str_eq(d.path, "img");
	ck_assert(d.ro);
	ck_assert_uint_eq(d.queues, 4);
	ck_assert_int_eq(d.io, DISK_IO_IOTHREAD);
	ck_assert_int_eq(d.pin, DISK_PIN_KERNEL);
	/* io= is service='s name before 0.2: still taken, with a warning */
	ck_assert_int_eq(options__parse_disk("img,io=iothread", &d, err,
					     sizeof(err)), 0);
	ck_assert_int_eq(d.io, DISK_IO_IOTHREAD);
	ck_assert_int_eq(options__parse_disk("img,service=threads", &d, err,
					     sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "service=threads"));
	ck_assert_int_eq(options__parse_disk("img,pin=fast", &d, err,
					     sizeof(err)), 0);
	ck_assert_int_eq(d.pin, DISK_PIN_FAST);
	ck_assert_int_eq(options__parse_disk("img,pin=locked", &d, err,
					     sizeof(err)), 0);
	ck_assert_int_eq(d.pin, DISK_PIN_LOCKED);
	ck_assert_int_eq(options__parse_disk("img,pin=registered", &d, err,
					     sizeof(err)), 0);
	ck_assert_int_eq(d.pin, DISK_PIN_REGISTERED);
	ck_assert_int_eq(d.pin_from, CONFIG_FROM_ROUTE);
	ck_assert(!d.no_event_idx);
	ck_assert_int_eq(options__parse_disk("img,event_idx=off", &d, err,
					     sizeof(err)), 0);
	ck_assert(d.no_event_idx);
	ck_assert_int_eq(options__parse_disk("img,event_idx=on", &d, err,
					     sizeof(err)), 0);
	ck_assert(!d.no_event_idx);
	/* the defaults: virtio-pci, interrupt holds bounded by latency */
	ck_assert_int_eq(d.transport, DISK_TRANSPORT_PCI);
	ck_assert_int_eq(d.irq_hold_us, DISK_IRQ_HOLD_AUTO);
	ck_assert_int_eq(options__parse_disk("img,irq_hold=0", &d, err,
					     sizeof(err)), 0);
	ck_assert_int_eq(d.irq_hold_us, 0);
	ck_assert_int_eq(options__parse_disk("img,irq_hold=250", &d, err,
					     sizeof(err)), 0);
	ck_assert_int_eq(d.irq_hold_us, 250);
	ck_assert_int_eq(options__parse_disk("img,irq_hold=auto", &d, err,
					     sizeof(err)), 0);
	ck_assert_int_eq(d.irq_hold_us, DISK_IRQ_HOLD_AUTO);
	ck_assert_int_eq(options__parse_disk("img,transport=pci", &d, err,
					     sizeof(err)), 0);
	ck_assert_int_eq(d.transport, DISK_TRANSPORT_PCI);
	ck_assert_int_eq(options__parse_disk("img,transport=mmio", &d, err,
					     sizeof(err)), 0);
	ck_assert_int_eq(d.transport, DISK_TRANSPORT_MMIO);
	ck_assert_uint_eq(d.iops, 0);
	ck_assert_uint_eq(d.bps, 0);
	ck_assert_uint_eq(d.poll_us, 0);
	ck_assert_int_eq(options__parse_disk("img,iops=500,bps=20M,poll=50", &d,
					     err, sizeof(err)), 0);
	ck_assert_uint_eq(d.iops, 500);
	ck_assert_uint_eq(d.bps, 20 << 20);
	ck_assert_uint_eq(d.poll_us, 50);
	ck_assert_int_eq(options__parse_disk("img,bps=4096,poll=0", &d, err,
					     sizeof(err)), 0);
	ck_assert_uint_eq(d.bps, 4096);
	ck_assert_uint_eq(d.poll_us, 0);
	ck_assert_int_eq(options__parse_disk("img,bps=1G", &d, err,
					     sizeof(err)), 0);
	ck_assert_uint_eq(d.bps, 1ULL << 30);
}
END_TEST

static const char *const bad_disk[] = {
	"", ",ro", "img,rw", "img,queues=0", "img,queues=65", "img,queues=x",
	"img,queues=", "img,io=aio", "img,pin=none", "img,pin=", "img,pin=Fast",
	"img,pin=register", "img,pin=Registered",
	"img,foo=1", "img,event_idx=", "img,event_idx=yes", "img,transport=",
	"img,transport=PCI", "img,transport=isa", "img,iops=0", "img,iops=",
	"img,iops=-1", "img,iops=1k", "img,iops=1000000001", "img,bps=0",
	"img,bps=1T", "img,bps=5X", "img,bps=M", "img,bps=99999999999999999999",
	"img,poll=-5", "img,poll=100001", "img,poll=x", "img,poll=",
	"img,irq_hold=", "img,irq_hold=-1", "img,irq_hold=Auto",
	"img,irq_hold=100001",
};

START_TEST(test_disk_option_rejects)
{
	struct disk_config d;
	char err[256] = "";

	ck_assert_msg(options__parse_disk(bad_disk[_i], &d, err, sizeof(err)) == -1,
		      "'%s' accepted", bad_disk[_i]);
	ck_assert_msg(err[0], "no reason for '%s'", bad_disk[_i]);
}
END_TEST

/* A bad pin= names every word, registered too. */
START_TEST(test_disk_pin_words)
{
	struct disk_config d;
	char err[256] = "";

	ck_assert_int_eq(options__parse_disk("img,pin=turbo", &d, err,
					     sizeof(err)), -1);
	ck_assert_str_eq(err, "--disk: pin=turbo: expected fast, locked, "
			 "registered or kernel");
	ck_assert_str_eq(disk_pin__name(DISK_PIN_REGISTERED), "registered");
}
END_TEST

/* Two disks: the first left to the default, the second @pin by a route. */
static void two_disks(struct vm_config *cfg, enum disk_pin pin)
{
	vm_config__init(cfg);
	cfg->ndisks = 2;
	disk_config__init(&cfg->disks[0]);
	disk_config__init(&cfg->disks[1]);
	cfg->disks[1].pin = pin;
	cfg->disks[1].pin_from = CONFIG_FROM_ROUTE;
}

/* The default pin= is settled once, before anything prints it. */
START_TEST(test_default_pin_resolved_once)
{
	struct vm_config cfg;
	bool gpin = access("/dev/gpin", F_OK) == 0;

	two_disks(&cfg, DISK_PIN_LOCKED);
	ck_assert(!vm_config__registers_ram(&cfg));
	vm_config__resolve(&cfg);
	if (!gpin) {
		ck_assert_int_eq(cfg.disks[0].pin, DISK_PIN_KERNEL);
		ck_assert_msg(strstr(cfg.disks[0].pin_why, "not loaded"), "%s",
			      cfg.disks[0].pin_why);
	}
	ck_assert_int_ne(cfg.disks[0].pin, DISK_PIN_DEFAULT);
	ck_assert_int_eq(cfg.disks[0].pin_from, CONFIG_FROM_DEFAULT);
	/* what a route said stays, and a second call changes nothing */
	ck_assert_int_eq(cfg.disks[1].pin, DISK_PIN_LOCKED);
	ck_assert_str_eq(cfg.disks[1].pin_why, "");
	cfg.disks[0].pin_why[0] = '\0';
	vm_config__resolve(&cfg);
	ck_assert_str_eq(cfg.disks[0].pin_why, "");
}
END_TEST

/* pin=registered is never a default: resolving leaves it as it was said. */
START_TEST(test_registered_pin_stays)
{
	struct vm_config cfg;

	two_disks(&cfg, DISK_PIN_REGISTERED);
	ck_assert(vm_config__registers_ram(&cfg));
	vm_config__resolve(&cfg);
	ck_assert_int_ne(cfg.disks[0].pin, DISK_PIN_REGISTERED);
	ck_assert_int_eq(cfg.disks[1].pin, DISK_PIN_REGISTERED);
	ck_assert_str_eq(cfg.disks[1].pin_why, "");
}
END_TEST

/*
 * pin=fast|locked|registered without gpin.ko: the disk is refused with a
 * reason that names its pin word.  (pin=registered's VM would have been
 * refused before its disks: its RAM cannot be pinned either.)
 */
START_TEST(test_gpin_backend_needs_module)
{
	static const struct vm_pinned_ram no_pins;
	static const struct {
		unsigned int mode;
		const struct vm_pinned_ram *pinned_ram;
		const char *word;
	} t[] = {
		{ GPIN_MODE_FAST, NULL, "fast" },
		{ GPIN_MODE_LOCKED, NULL, "locked" },
		{ GPIN_MODE_FAST, &no_pins, "registered" },
	};
	char path[] = "./test_gpin_backend.XXXXXX", err[256] = "";
	struct virtio_blk_params p = { .path = path, .nqueues = 2,
				       .backend = &blk_backend_gpin_ops };
	int fd;

	if (access("/dev/gpin", F_OK) == 0)
		return;		/* gpin.ko loaded: the rig tests cover it */
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 1 << 20), 0);
	close(fd);
	p.gpin_mode = t[_i].mode;
	p.pinned_ram = t[_i].pinned_ram;
	ck_assert_ptr_null(virtio_blk__create(&p, err, sizeof(err)));
	ck_assert_msg(strstr(err, t[_i].word), "%s", err);
	unlink(path);
}
END_TEST

START_TEST(test_disk_option_count)
{
	char *argv[2 + 2 * (VM_DISKS_MAX + 1)] = { "gpin-vmm", "-k", "bz" };
	struct vm_options o;
	char err[256];
	int i, argc = 3;

	for (i = 0; i < VM_DISKS_MAX; i++) {
		argv[argc++] = "--disk";
		argv[argc++] = "img";
	}
	ck_assert_int_eq(options__parse(&o, argc, argv, err, sizeof(err)), 0);
	ck_assert_uint_eq(o.vm.ndisks, VM_DISKS_MAX);
	argv[argc++] = "-d";
	ck_assert_int_eq(options__parse(&o, argc, argv, err, sizeof(err)), -1);
}
END_TEST

/* --churn[=KIB], the benchmark's mmap_lock writer. */
START_TEST(test_churn_option)
{
	char *argv[] = { "gpin-vmm", "-k", "bz", NULL };
	struct vm_options o;
	char err[256];

	ck_assert_int_eq(options__parse(&o, 3, argv, err, sizeof(err)), 0);
	ck_assert_uint_eq(o.vm.churn_kib, 0);
	argv[3] = "--churn";
	ck_assert_int_eq(options__parse(&o, 4, argv, err, sizeof(err)), 0);
	ck_assert_uint_eq(o.vm.churn_kib, 64);
	argv[3] = "--churn=256";
	ck_assert_int_eq(options__parse(&o, 4, argv, err, sizeof(err)), 0);
	ck_assert_uint_eq(o.vm.churn_kib, 256);
	argv[3] = "--churn=2";
	ck_assert_int_eq(options__parse(&o, 4, argv, err, sizeof(err)), -1);
	argv[3] = "--churn=x";
	ck_assert_int_eq(options__parse(&o, 4, argv, err, sizeof(err)), -1);
}
END_TEST

static Suite *disk_options_suite(void)
{
	Suite *s = suite_create("disk_options");
	TCase *tc;

	tc = tcase_create("options");
	tcase_add_test(tc, test_disk_option);
	tcase_add_loop_test(tc, test_disk_option_rejects, 0,
			    sizeof(bad_disk) / sizeof(bad_disk[0]));
	tcase_add_test(tc, test_disk_pin_words);
	tcase_add_test(tc, test_disk_option_count);
	tcase_add_loop_test(tc, test_gpin_backend_needs_module, 0, 3);
	tcase_add_test(tc, test_default_pin_resolved_once);
	tcase_add_test(tc, test_registered_pin_stays);
	tcase_add_test(tc, test_churn_option);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(disk_options_suite());
}
