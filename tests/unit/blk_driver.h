/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A virtio-blk driver for the unit tests (blk_driver.c): guest memory,
 * the device on virtio-mmio, queue 0 set up as Linux does.
 */
#ifndef GPIN_TEST_BLK_DRIVER_H
#define GPIN_TEST_BLK_DRIVER_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>

#include <linux/virtio_ring.h>

#include "devices/virtio_blk.h"
#include "devices/virtio_blk_req.h"
#include "virtio/mmio.h"

#define MEM_SIZE	0x100000ULL
#define QS		16
#define DESC		0x1000ULL
#define AVAIL		0x2000ULL
#define USED		0x3000ULL
#define HDR		0x8000ULL
#define STATUS		0x8800ULL
#define BUF		0x10000ULL		/* 4K-aligned data */
#define DISK_SIZE	(8 << 20)	/* room for 4 MiB requests */

extern uint8_t *gmem;
extern struct virtio_blk *blk;
extern struct virtio_mmio *mmio;
extern int irq_level, irq_raises;
extern uint16_t avail_idx;
/*
 * Called for every guest range the device translates (NULL: nothing), on
 * the device's thread: a test's guest can act while the device walks its
 * ring, as a guest on another vCPU would.
 */
extern void (*gtranslate_hook)(uint64_t gpa, uint64_t len);

/* Guest memory and a scratch disk; dev_setup() also makes the device. */
void dev_setup_bare(void);
void dev_setup(void);
void dev_teardown(void);
/* The device with @p (its path filled in), on virtio-mmio at 0, GSI 5. */
void make_device_with(struct virtio_blk_params *p);
/* Two queues on the io_uring backend. */
void make_device(bool ro);

uint32_t rd(uint64_t off);
void wr(uint64_t off, uint32_t v);
void setup_queue(unsigned int q, uint32_t num, uint64_t desc);
/* Up to DRIVER_OK with queue 0 (@num entries), every feature but @refuse. */
void driver_init_queue(uint64_t refuse, uint32_t num);
/* The same with QS entries. */
void driver_init_refusing(uint64_t refuse);
void driver_init(void);
struct vring_desc *gdesc(unsigned int i);
struct vring_used *gused(void);
/*
 * Submits header | data | status on queue 0 and waits for it; returns
 * the status byte (0xff if it never came).  Descriptors 0, 1, 2.
 */
int request(uint32_t type, uint64_t sector, uint64_t buf, uint32_t len,
	    bool dev_writes);
/* The interrupt line once it has risen (0 if not within 5 s). */
int wait_irq_level(void);
/* The event fields of queue 0. */
uint16_t *gused_event(void);
uint16_t *gavail_event(void);

#endif /* GPIN_TEST_BLK_DRIVER_H */
