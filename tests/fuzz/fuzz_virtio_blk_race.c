// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the virtio-blk device with its real threads while a
 * second guest thread keeps rewriting guest memory - descriptors, rings,
 * headers - under it.  The device (devices/virtio_blk.c on virtio-mmio)
 * runs as in gpin-vmm: each queue has its thread (blkN-qM), the fuzzer's
 * thread is the vCPU that writes registers and notifies (or, service=iothread,
 * signals the queue's eventfd), and a fake disk completes requests on
 * its own thread after a short delay.
 *
 * The input: byte 0 picks the device (bit 0: service=iothread; bit 1: with
 * irq_hold= and poll=, whose timers and held interrupts then race too)
 * and the number of racer writes (bits 2-7, modulo RACER_MAX + 1); then
 * that many 8-byte racer entries (a 32-bit value, an address in guest
 * RAM), which the racer thread stores in a loop, each alternately as
 * given and inverted, until the input ends; then 8-byte guest actions as
 * in fuzz_virtio_blk_dev.c (register write or read, RAM write, and "let
 * the threads run" for up to 255 us, or toggle a disk that refuses
 * submissions).  At the end the racer stops, the device is reset, and
 * every request that reached the disk must come back to the device (none
 * lost, none twice), with no bounce buffer left.
 *
 * Built twice: with ASan and UBSan (a short CI run: a rewrite between a
 * check and a use shows as a buffer outside guest RAM or a sanitizer
 * report), and with TSan as a benchmark binary (docs/results/fuzz.md).
 * Races on guest memory are the design - the device copies each
 * descriptor once and checks the copy, the guest may write what it likes
 * meanwhile - so guest RAM is annotated benign for TSan and every report
 * it makes is about the VMM's own state.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_mmio.h>

#include "devices/blk_backend.h"
#include "devices/virtio_blk.h"
#include "fake_disk.h"
#include "virtio/mmio.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RACE_TSAN 1
#endif
#endif

#define RAM_SIZE	(256u << 10)
#define NQ		2
#define MMIO_BASE	0xd0000000ULL
#define RACER_MAX	15

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef RACE_TSAN
#include <elf.h>
#include <link.h>

void AnnotateBenignRaceSized(const char *file, int line,
			     const volatile void *mem, size_t size,
			     const char *desc);
const char *__tsan_default_options(void);

/*
 * A report is a failure; the fuzzer keeps the input.  Called before TSan
 * is set up, so not instrumented.
 */
__attribute__((disable_sanitizer_instrumentation, no_sanitize("coverage")))
const char *__tsan_default_options(void)
{
	return "halt_on_error=1:second_deadlock_stack=1";
}

static int program_base(struct dl_phdr_info *info, size_t size, void *base)
{
	*(uintptr_t *)base = info->dlpi_addr;
	return 1;			/* the first object is the program */
}

/*
 * The fuzzer's coverage counters (section __sancov_cntrs), which every
 * thread bumps without a lock and clang 14's TSan instruments: benign
 * too.  (Naming __start___sancov_cntrs here makes the linker drop the
 * fuzzer's own registration of them, so the section is looked up in the
 * program file.)
 */
static void annotate_counters(void)
{
	FILE *f = fopen("/proc/self/exe", "rb");
	uintptr_t base = 0;
	Elf64_Shdr *sh;
	Elf64_Ehdr *eh;
	char *elf;
	long len;
	int i;

	if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) <= 0)
		abort();
	elf = malloc(len);
	rewind(f);
	if (!elf || fread(elf, 1, len, f) != (size_t)len)
		abort();
	fclose(f);
	dl_iterate_phdr(program_base, &base);
	eh = (Elf64_Ehdr *)elf;
	sh = (Elf64_Shdr *)(elf + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++)
		if (!strcmp(elf + sh[eh->e_shstrndx].sh_offset + sh[i].sh_name,
			    "__sancov_cntrs"))
			AnnotateBenignRaceSized(__FILE__, __LINE__,
						(void *)(base + sh[i].sh_addr),
						sh[i].sh_size,
						"the fuzzer's coverage counters");
	free(elf);
}
#endif

static uint8_t ram[RAM_SIZE] __attribute__((aligned(4096)));
static char disk_path[] = "/dev/shm/fuzz_virtio_blk_race.XXXXXX";

static void *translate(void *opaque, uint64_t gpa, uint64_t len)
{
	if (gpa > RAM_SIZE || len > RAM_SIZE - gpa)
		return NULL;
	return ram + gpa;
}

static void set_irq(void *opaque, unsigned int gsi, int level)
{
}

/* ---- the disk: tests/common/fake_disk.c, on its own thread ----------- */

static void sleep_us(unsigned int us)
{
	struct timespec ts = { 0, us * 1000L };

	nanosleep(&ts, NULL);
}

/* Every buffer lies in guest RAM; a READ brings its first and last byte. */
static void disk_io(struct blk_io *io)
{
	unsigned int i;

	for (i = 0; i < io->niov; i++) {
		uint8_t *b = io->iov[i].iov_base;
		size_t len = io->iov[i].iov_len;

		if (b < ram || len > RAM_SIZE || b + len > ram + RAM_SIZE)
			abort();
		if (io->op == BLK_IO_READ && !io->bounce && len) {
			__atomic_store_n(b, 0xab, __ATOMIC_RELAXED);
			__atomic_store_n(b + len - 1, 0xab, __ATOMIC_RELAXED);
		}
	}
	if (io->op == BLK_IO_READ && io->bounce)
		memset(io->bounce, 0xcd, io->len < 4096 ? io->len : 4096);
}

/* direct: misaligned buffers bounce */
static const struct fake_disk_opts race_disk = {
	.direct = true,
	.fill = -1,
	.on_io = disk_io,
};

/* ---- the devices: service=vcpu and service=iothread, each plain and moderated -- */

#define NDEV		4
#define DEV_IOTHREAD	1u
#define DEV_MODERATED	2u

static struct virtio_blk *blks[NDEV];

static struct fake_disk *disk_of(struct virtio_blk *blk)
{
	return fake_disk__of(virtio_blk__backend(blk));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd = mkstemp(disk_path);
	char err[256];
	unsigned int i;

	if (fd < 0 || ftruncate(fd, 8 << 20))
		abort();
	close(fd);
#ifdef RACE_TSAN
	AnnotateBenignRaceSized(__FILE__, __LINE__, ram, sizeof(ram),
				"guest RAM: the guest writes it at any time");
	annotate_counters();
#endif
	for (i = 0; i < NDEV; i++) {
		bool moderated = i & DEV_MODERATED;
		struct virtio_blk_params p = {
			.path = disk_path,
			.nqueues = NQ,
			.iothread = i & DEV_IOTHREAD,
			.backend = &fake_disk_ops,
			.index = i,
			.quiet = true,
			.irq_hold_us = moderated ? 300 : 0,
			.poll_us = moderated ? 50 : 0,
		};

		fake_disk__set(&race_disk);
		blks[i] = virtio_blk__create(&p, err, sizeof(err));
		if (!blks[i])
			abort();
	}
	return 0;
}

/* ---- the racer --------------------------------------------------------- */

static struct racer {
	uint32_t off[RACER_MAX], val[RACER_MAX];
	unsigned int n;
	_Atomic bool run;
	pthread_t thread;
} racer;

static void *racer_thread(void *arg)
{
	unsigned int i, iter = 0;

	while (atomic_load_explicit(&racer.run, memory_order_relaxed)) {
		for (i = 0; i < racer.n; i++)
			__atomic_store_n((uint32_t *)(ram + racer.off[i]),
					 iter & 1 ? ~racer.val[i] : racer.val[i],
					 __ATOMIC_RELAXED);
		iter++;
	}
	return NULL;
}

/* ---- the guest ------------------------------------------------------- */

enum { A_WRITE_REG, A_READ_REG, A_WRITE_RAM, A_RUN, A_KINDS };

static void write_reg(struct virtio_mmio *m, struct virtio_blk *blk,
		      bool iothread, uint16_t off, uint32_t val)
{
	uint64_t v = val;

	off %= VIRTIO_MMIO_WINDOW - 3;
	/* service=iothread: KVM signals the queue's eventfd, no exit */
	if (iothread && off == VIRTIO_MMIO_QUEUE_NOTIFY) {
		if (val < NQ)
			eventfd_write(virtio_blk__kick_fd(blk, val), 1);
		return;
	}
	virtio_mmio__ops.write(m, off, &v, 4);
}

/* After the reset: everything that reached the disk came back. */
static void wait_idle(struct virtio_blk *blk)
{
	unsigned int i;

	/* the disk itself aborts on a request finished twice */
	for (i = 0; i < 50000; i++) {
		if (fake_disk__idle(disk_of(blk)) &&
		    !virtio_blk__backend(blk)->bounce_bytes)
			return;
		sleep_us(100);
	}
	abort();	/* a request left behind, or a bounce buffer */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct virtq_mem mem = { .translate = translate };
	struct virtio_blk *blk;
	struct fake_disk *d;
	struct virtio_mmio *m;
	bool iothread, full = false;
	size_t i;

	if (!size)
		return 0;
	iothread = data[0] & DEV_IOTHREAD;
	blk = blks[data[0] % NDEV];
	d = disk_of(blk);
	racer.n = (data[0] >> 2) % (RACER_MAX + 1);
	data++;
	size--;
	if (size < racer.n * 8)
		racer.n = size / 8;
	for (i = 0; i < racer.n; i++) {
		memcpy(&racer.val[i], data + 8 * i, 4);
		memcpy(&racer.off[i], data + 8 * i + 4, 4);
		racer.off[i] = (racer.off[i] % RAM_SIZE) & ~3u;
	}
	data += 8 * racer.n;
	size -= 8 * racer.n;

	memset(ram, 0, sizeof(ram));
	fake_disk__set_delay(d, 0);
	fake_disk__set_full(d, false);
	m = virtio_mmio__create(virtio_blk__dev(blk), &mem, MMIO_BASE, 16,
				set_irq, NULL);
	if (!m)
		abort();
	atomic_store(&racer.run, true);
	if (racer.n && pthread_create(&racer.thread, NULL, racer_thread, NULL))
		abort();

	for (i = 0; i + 8 <= size; i += 8) {
		const uint8_t *a = data + i;
		uint16_t off;
		uint32_t val;
		uint64_t v;

		memcpy(&off, a + 2, sizeof(off));
		memcpy(&val, a + 4, sizeof(val));
		switch (a[0] % A_KINDS) {
		case A_WRITE_REG:
			write_reg(m, blk, iothread, off, val);
			break;
		case A_READ_REG:
			virtio_mmio__ops.read(m, off % (VIRTIO_MMIO_WINDOW - 3),
					      &v, 4);
			break;
		case A_WRITE_RAM:
			memcpy(ram + (((uint32_t)a[1] << 16 | off) %
				      (RAM_SIZE - 3)), &val, 4);
			break;
		case A_RUN:
			/*
			 * a[1]: bit 7 toggles a disk that refuses
			 * submissions, bits 0-5 its delay (us); then the
			 * threads run for off % 256 us.
			 */
			if (a[1] & 0x80)
				full = !full;
			fake_disk__set_full(d, full);
			fake_disk__set_delay(d, a[1] & 0x3f);
			sleep_us(off & 0xff);
			break;
		}
	}

	atomic_store(&racer.run, false);
	if (racer.n)
		pthread_join(racer.thread, NULL);
	fake_disk__set_full(d, false);
	/*
	 * The guest resets the device; what the reset gives up on
	 * completes later, after the transport is gone (as at the VMM's
	 * exit), stale.
	 */
	virtio_mmio__destroy(m);
	wait_idle(blk);
	return 0;
}
