// SPDX-License-Identifier: GPL-2.0-only
/*
 * A virtio-blk driver for the unit tests: guest memory in a plain
 * buffer, the device on its virtio-mmio transport over a scratch file,
 * and what Linux's virtio_mmio and virtio_blk drivers do with them, one
 * request at a time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_mmio.h>

#include "blk_driver.h"


uint8_t *gmem;
static char disk_path[] = "./test_virtio_blk.XXXXXX";
struct virtio_blk *blk;
struct virtio_mmio *mmio;
int irq_level, irq_raises;
uint16_t avail_idx;
void (*gtranslate_hook)(uint64_t gpa, uint64_t len);

static void *gtranslate(void *opaque, uint64_t gpa, uint64_t len)
{
	if (gtranslate_hook)
		gtranslate_hook(gpa, len);
	if (gpa + len < gpa || gpa + len > MEM_SIZE)
		return NULL;
	return gmem + gpa;
}

static void set_irq(void *opaque, unsigned int gsi, int level)
{
	ck_assert_uint_eq(gsi, 5);
	__atomic_store_n(&irq_level, level, __ATOMIC_SEQ_CST);
	if (level)
		__atomic_add_fetch(&irq_raises, 1, __ATOMIC_SEQ_CST);
}

uint32_t rd(uint64_t off)
{
	uint32_t v;

	virtio_mmio__ops.read(mmio, off, &v, 4);
	return v;
}

void wr(uint64_t off, uint32_t v)
{
	virtio_mmio__ops.write(mmio, off, &v, 4);
}

void make_device_with(struct virtio_blk_params *p)
{
	struct virtq_mem mem = { .translate = gtranslate };
	char err[256];

	p->path = disk_path;
	blk = virtio_blk__create(p, err, sizeof(err));
	ck_assert_msg(blk != NULL, "%s", err);
	mmio = virtio_mmio__create(virtio_blk__dev(blk), &mem, 0, 5, set_irq,
				   NULL);
	ck_assert_ptr_nonnull(mmio);
}

void make_device(bool ro)
{
	struct virtio_blk_params p = {
		.ro = ro, .nqueues = 2, .backend = &blk_backend_uring_ops,
	};

	make_device_with(&p);
}

void dev_setup_bare(void)
{
	int fd = mkstemp(disk_path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, DISK_SIZE), 0);
	close(fd);
	gmem = calloc(1, MEM_SIZE);
	ck_assert_ptr_nonnull(gmem);
	irq_level = irq_raises = 0;
	avail_idx = 0;
	gtranslate_hook = NULL;
}

void dev_setup(void)
{
	dev_setup_bare();
	make_device(false);
}

void dev_teardown(void)
{
	virtio_mmio__destroy(mmio);
	virtio_blk__destroy(blk);
	unlink(disk_path);
	strcpy(disk_path, "./test_virtio_blk.XXXXXX");
	free(gmem);
}

void setup_queue(unsigned int q, uint32_t num, uint64_t desc)
{
	wr(VIRTIO_MMIO_QUEUE_SEL, q);
	wr(VIRTIO_MMIO_QUEUE_NUM, num);
	wr(VIRTIO_MMIO_QUEUE_DESC_LOW, desc);
	wr(VIRTIO_MMIO_QUEUE_DESC_HIGH, desc >> 32);
	wr(VIRTIO_MMIO_QUEUE_AVAIL_LOW, AVAIL);
	wr(VIRTIO_MMIO_QUEUE_AVAIL_HIGH, 0);
	wr(VIRTIO_MMIO_QUEUE_USED_LOW, USED);
	wr(VIRTIO_MMIO_QUEUE_USED_HIGH, 0);
	wr(VIRTIO_MMIO_QUEUE_READY, 1);
}

/*
 * What Linux's virtio_mmio does up to DRIVER_OK, with queue 0 only:
 * accepts every feature offered but @refuse.
 */
void driver_init_queue(uint64_t refuse, uint32_t num)
{
	uint64_t f;

	wr(VIRTIO_MMIO_STATUS, 0);
	wr(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	wr(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	f = rd(VIRTIO_MMIO_DEVICE_FEATURES);
	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	f |= (uint64_t)rd(VIRTIO_MMIO_DEVICE_FEATURES) << 32;
	f &= ~refuse;
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, f);
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, f >> 32);
	wr(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			       VIRTIO_CONFIG_S_FEATURES_OK);
	ck_assert(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_FEATURES_OK);
	setup_queue(0, num, DESC);
	wr(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			       VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET, 0);
}

void driver_init_refusing(uint64_t refuse)
{
	driver_init_queue(refuse, QS);
}

void driver_init(void)
{
	driver_init_refusing(0);
}

struct vring_desc *gdesc(unsigned int i)
{
	return (struct vring_desc *)(gmem + DESC) + i;
}

struct vring_used *gused(void)
{
	return (struct vring_used *)(gmem + USED);
}

/*
 * Submits header | data | status on queue 0 and waits for it; returns
 * the status byte (0xff if it never came).  Descriptors 0, 1, 2.
 */
int request(uint32_t type, uint64_t sector, uint64_t buf,
		   uint32_t len, bool dev_writes)
{
	struct vring_avail *a = (struct vring_avail *)(gmem + AVAIL);
	struct virtio_blk_outhdr h = { .type = type, .sector = sector };
	uint16_t want = gused()->idx + 1;
	struct timespec ts = { 0, 1000000 };
	unsigned int d = 0, i;

	memcpy(gmem + HDR, &h, sizeof(h));
	gmem[STATUS] = 0xff;
	*gdesc(d) = (struct vring_desc) { HDR, 16, VRING_DESC_F_NEXT, 1 };
	if (len)
		*gdesc(++d) = (struct vring_desc) { buf, len,
			VRING_DESC_F_NEXT | (dev_writes ? VRING_DESC_F_WRITE : 0),
			2 };
	gdesc(d)->next = d + 1;
	*gdesc(++d) = (struct vring_desc) { STATUS, 1, VRING_DESC_F_WRITE, 0 };
	a->ring[avail_idx % QS] = 0;
	__atomic_store_n(&a->idx, ++avail_idx, __ATOMIC_RELEASE);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	for (i = 0; i < 5000; i++) {
		if (__atomic_load_n(&gused()->idx, __ATOMIC_ACQUIRE) == want)
			return gmem[STATUS];
		nanosleep(&ts, NULL);
	}
	return 0xff;
}

/*
 * The interrupt line after an asynchronous completion: the device publishes
 * the used index before it decides on the interrupt, from another thread,
 * so request() can return first.  Waits up to 5 s for the line to rise.
 */
int wait_irq_level(void)
{
	struct timespec ts = { 0, 1000000 };
	unsigned int i;

	for (i = 0; i < 5000; i++) {
		if (__atomic_load_n(&irq_level, __ATOMIC_SEQ_CST))
			return 1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* The event fields of queue 0, where the specification puts them. */
uint16_t *gused_event(void)
{
	return (uint16_t *)(gmem + AVAIL + 4 + 2 * QS);
}

uint16_t *gavail_event(void)
{
	return (uint16_t *)(gmem + USED + 4 + 8 * QS);
}

