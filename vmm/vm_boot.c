// SPDX-License-Identifier: GPL-2.0-only
/*
 * vm__boot(): from a struct vm_config to running vCPUs, the one start-up
 * sequence every front end uses (main.c for the command line and
 * --domain, api/run.c for vm.boot).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/x86/boot.h"
#include "log.h"
#include "util.h"
#include "vm.h"

/* The boot images, mapped only until they are copied into guest RAM. */
struct boot_images {
	struct mapped_file kernel;
	struct mapped_file initrd;
};

static int map_images(const struct vm_config *cfg, struct boot_images *img,
		      char *err, size_t errlen)
{
	char why[256];
	int ret;

	ret = map_file(cfg->kernel, &img->kernel);
	if (ret)
		return err__set(err, errlen, "kernel '%s': %s", cfg->kernel,
				strerror(-ret));
	if (boot__check_bzimage(img->kernel.data, img->kernel.size, why,
				sizeof(why)))
		return err__set(err, errlen, "kernel '%s': %s", cfg->kernel,
				why);
	if (!cfg->initrd[0])
		return 0;
	ret = map_file(cfg->initrd, &img->initrd);
	if (ret)
		return err__set(err, errlen, "initrd '%s': %s", cfg->initrd,
				strerror(-ret));
	return 0;
}

static void unmap_images(struct boot_images *img)
{
	unmap_file(&img->kernel);
	unmap_file(&img->initrd);
}

int vm__boot(struct vm *vm, const struct vm_config *cfg,
	     const struct serial_backend *console, char *err, size_t errlen)
{
	struct boot_images img = { 0 };
	struct boot_files files = { .cmdline = cfg->cmdline };
	int ret;

	if (map_images(cfg, &img, err, errlen)) {
		ret = -ENOEXEC;
		goto err_unmap;
	}
	files.kernel = img.kernel.data;
	files.kernel_size = img.kernel.size;
	files.initrd = img.initrd.data;
	files.initrd_size = img.initrd.size;
	ret = vm__create(vm, cfg, console, err, errlen);
	if (ret)
		goto err_unmap;
	if (cfg->mem_locked && mlock(vm->ram, vm->ram_size)) {
		ret = -errno;
		err__set(err, errlen, "locking guest RAM: %s", strerror(-ret));
		goto err_destroy;
	}
	if (vm__load(vm, &files, err, errlen)) {
		ret = -ENOEXEC;
		goto err_destroy;
	}
	/* in guest RAM now: the VMM keeps no copy */
	unmap_images(&img);
	ret = vm__start(vm);
	if (ret) {
		err__set(err, errlen, "starting the vCPU and churn threads: %s",
			 strerror(-ret));
		vm_run__request_stop(&vm->run, VM_STOP_ERROR, 0);
		vm__join(vm);
		vm__destroy(vm);
	}
	return ret;

err_destroy:
	vm__destroy(vm);
err_unmap:
	unmap_images(&img);
	return ret;
}
