// SPDX-License-Identifier: GPL-2.0-only
/*
 * vm_pinned_ram.c (pin=registered): guest RAM's regions, which buffers
 * its pins hold, and why a VM is refused - what can be tested without
 * gpin.ko; the pinning itself is the rig's (tests/rig).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "arch/x86/layout.h"
#include "unit.h"
#include "vm.h"
#include "vm_guest.h"
#include "vm_pinned_ram.h"

#define GIB	(1ULL << 30)
#define MIB	(1ULL << 20)

/* The layout KVM's slots and the pins take: split at the MMIO hole. */
START_TEST(test_ram_regions)
{
	struct vm_ram_region r[VM_RAM_REGIONS_MAX];
	struct vm vm = { .ram = (uint8_t *)(uintptr_t)GIB };

	vm.ram_size = vm.lowmem_size = 512 * MIB;
	ck_assert_uint_eq(vm_guest__ram_regions(&vm, r), 1);
	ck_assert_uint_eq(r[0].gpa, 0);
	ck_assert_ptr_eq(r[0].hva, vm.ram);
	ck_assert_uint_eq(r[0].size, 512 * MIB);
	vm.ram_size = 5 * GIB;
	vm.lowmem_size = MMIO_HOLE_START;
	ck_assert_uint_eq(vm_guest__ram_regions(&vm, r), 2);
	ck_assert_uint_eq(r[0].size, MMIO_HOLE_START);
	ck_assert_uint_eq(r[1].gpa, MMIO_HOLE_END);
	ck_assert_ptr_eq(r[1].hva, vm.ram + MMIO_HOLE_START);
	ck_assert_uint_eq(r[1].size, 5 * GIB - MMIO_HOLE_START);
}
END_TEST

static struct iovec seg(uintptr_t base, size_t len)
{
	return (struct iovec) { (void *)base, len };
}

/*
 * Two pieces back to back at 1 GiB (one region split at its first GiB):
 * a buffer is held when it lies inside one of them.
 */
START_TEST(test_holds)
{
	struct vm_pinned_ram pr = {
		.npieces = 2,
		.piece = { { GIB, 2 * GIB }, { 2 * GIB, 2 * GIB + 4096 } },
	};
	struct iovec iov[3];

	iov[0] = seg(GIB, 4096);
	iov[1] = seg(2 * GIB - 4096, 4096);
	iov[2] = seg(2 * GIB, 4096);
	ck_assert(vm_pinned_ram__holds(&pr, iov, 3));
	ck_assert(vm_pinned_ram__holds(&pr, iov, 0));
	/* across the two pins: neither holds it */
	iov[0] = seg(2 * GIB - 512, 1024);
	ck_assert(!vm_pinned_ram__holds(&pr, iov, 1));
	/* before, after, and past the end of the last */
	iov[0] = seg(GIB - 512, 512);
	ck_assert(!vm_pinned_ram__holds(&pr, iov, 1));
	iov[0] = seg(2 * GIB + 4096, 512);
	ck_assert(!vm_pinned_ram__holds(&pr, iov, 1));
	iov[0] = seg(2 * GIB + 512, 4096);
	ck_assert(!vm_pinned_ram__holds(&pr, iov, 1));
	/* one buffer outside (a bounce buffer) spoils the request */
	iov[0] = seg(GIB, 4096);
	iov[1] = seg(16 * GIB, 4096);
	ck_assert(!vm_pinned_ram__holds(&pr, iov, 2));
	/* an empty buffer is nowhere and needs no pin */
	iov[1] = seg(16 * GIB, 0);
	ck_assert(vm_pinned_ram__holds(&pr, iov, 2));
}
END_TEST

/* More than one file holds: refused before /dev/gpin is even opened. */
START_TEST(test_refuses_over_4g)
{
	struct vm_ram_region r[2] = {
		{ 0, (void *)(uintptr_t)GIB, MMIO_HOLE_START },
		{ MMIO_HOLE_END, (void *)(uintptr_t)(GIB + MMIO_HOLE_START),
		  2 * GIB },
	};
	struct vm_pinned_ram *pr = (void *)1;
	char err[512] = "";

	ck_assert_int_eq(vm_pinned_ram__create(&pr, r, 2, err, sizeof(err)),
			 -ENOSPC);
	ck_assert_ptr_null(pr);
	if (sysconf(_SC_PAGESIZE) == 4096)
		ck_assert_str_eq(err, "pin=registered: 5120 MiB of guest RAM "
				 "is more than gpin.ko registers for one VM "
				 "(4096 MiB): give it --mem 4096M or less, or "
				 "use pin=fast");
}
END_TEST

/* No gpin.ko: the VM is refused, with no other pin mode instead. */
START_TEST(test_refuses_without_module)
{
	struct vm_ram_region r = { 0, (void *)(uintptr_t)GIB, 256 * MIB };
	struct vm_pinned_ram *pr = (void *)1;
	char err[512] = "";

	if (access(GPIN_DEVICE_PATH, F_OK) == 0)
		return;		/* gpin.ko loaded: the rig tests cover it */
	ck_assert_int_eq(vm_pinned_ram__create(&pr, &r, 1, err, sizeof(err)),
			 -ENOENT);
	ck_assert_ptr_null(pr);
	ck_assert_str_eq(err, "pin=registered: no /dev/gpin (gpin.ko not "
			 "loaded); pin=kernel works without it");
}
END_TEST

/* ENOMEM under a low RLIMIT_MEMLOCK: the limit, the need, the ways out. */
START_TEST(test_why_memlock)
{
	struct rlimit rl;
	char why[512];

	ck_assert_int_eq(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	rl.rlim_cur = 64 << 10;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < rl.rlim_cur)
		rl.rlim_cur = rl.rlim_max;
	ck_assert_int_eq(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	vm_pinned_ram__why(ENOMEM, GIB, why, sizeof(why));
	ck_assert_msg(strstr(why, "pin=registered: pinning 1024 MiB of guest "
			     "RAM (charged to VmPin) goes past "
			     "RLIMIT_MEMLOCK, "), "%s", why);
	ck_assert_msg(strstr(why, "KiB: raise it to at least 1048576 KiB "
			     "(ulimit -l 1048576; LimitMEMLOCK= for a systemd "
			     "unit) or give gpin-vmm CAP_IPC_LOCK"), "%s", why);
	if (rl.rlim_cur == 64 << 10)
		ck_assert_msg(strstr(why, "RLIMIT_MEMLOCK, 64 KiB:"), "%s",
			      why);
	/* a limit that covers the RAM: the memory itself ran out */
	vm_pinned_ram__why(ENOMEM, 0, why, sizeof(why));
	ck_assert_str_eq(why, "pin=registered: out of memory pinning 0 MiB of "
			 "guest RAM, with RLIMIT_MEMLOCK high enough: the "
			 "host's free memory, or gpin.ko's max_pins parameter");
}
END_TEST

/* Any other error as strerror() says it. */
START_TEST(test_why_other)
{
	char why[512];

	vm_pinned_ram__why(EACCES, GIB, why, sizeof(why));
	ck_assert_str_eq(why, "pin=registered: registering guest RAM with "
			 "gpin.ko (/dev/gpin): Permission denied");
	vm_pinned_ram__why(EINVAL, GIB, why, sizeof(why));
	ck_assert_msg(strstr(why, "Invalid argument (a gpin.ko older than "
			     "this gpin-vmm has no GPIN_PIN_DIO)"), "%s", why);
}
END_TEST

static Suite *pinned_ram_suite(void)
{
	Suite *s = suite_create("pinned_ram");
	TCase *tc = tcase_create("pinned_ram");

	tcase_add_test(tc, test_ram_regions);
	tcase_add_test(tc, test_holds);
	tcase_add_test(tc, test_refuses_over_4g);
	tcase_add_test(tc, test_refuses_without_module);
	tcase_add_test(tc, test_why_memlock);
	tcase_add_test(tc, test_why_other);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(pinned_ram_suite());
}
