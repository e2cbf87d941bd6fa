// SPDX-License-Identifier: GPL-2.0-only
/*
 * virtio-blk: the request parser rejection by rejection, then the whole
 * device - virtio-mmio register file, queues, the io_uring backend on a
 * real file - driven the way a guest driver does, on plain memory, and
 * the counters it keeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_mmio.h>

#include "devices/virtio_blk.h"
#include "devices/virtio_blk_req.h"
#include "options.h"
#include "unit.h"
#include "virtio/mmio.h"
#include "vm.h"

/* ---- the parser ---------------------------------------------------- */

#define NB 8

static uint8_t hdrbuf[64], data[8192], status[4];
static struct virtq_buf pbufs[NB];
static struct virtq_chain pchain;
static struct iovec piov[NB];
static struct blk_req req;

static const struct blk_limits lim512 = {
	.capacity = 2048,	/* 1 MiB */
	.blk_size = 512,
	.discard = true,
	.write_zeroes = true,
	.max_discard_sectors = 1024,
	.max_write_zeroes_sectors = 1024,
};

static void chain_reset(void)
{
	memset(&pchain, 0, sizeof(pchain));
	pchain.bufs = pbufs;
}

static void add(void *p, uint32_t len, bool w)
{
	pbufs[pchain.nbufs++] = (struct virtq_buf) { p, len, w };
	if (w) {
		pchain.writable_len += len;
	} else {
		pchain.readable_len += len;
		pchain.nreadable++;
	}
}

static void hdr(uint32_t type, uint64_t sector)
{
	struct virtio_blk_outhdr h = { .type = type, .sector = sector };

	memcpy(hdrbuf, &h, sizeof(h));
}

static void seg(uint64_t sector, uint32_t n, uint32_t flags)
{
	struct virtio_blk_discard_write_zeroes s = {
		.sector = sector, .num_sectors = n, .flags = flags,
	};

	memcpy(hdrbuf + 16, &s, sizeof(s));
}

/* The usual Linux layout: header | data | status. */
static int parse3(uint32_t type, uint64_t sector, uint32_t len, bool wdata,
		  const struct blk_limits *lim)
{
	chain_reset();
	hdr(type, sector);
	add(hdrbuf, 16, false);
	if (len)
		add(data, len, wdata);
	add(status, 1, true);
	return virtio_blk__parse(&pchain, lim, piov, &req);
}

START_TEST(test_parse_read)
{
	ck_assert_int_eq(parse3(VIRTIO_BLK_T_IN, 8, 4096, true, &lim512),
			 VIRTIO_BLK_S_OK);
	ck_assert_uint_eq(req.type, VIRTIO_BLK_T_IN);
	ck_assert_uint_eq(req.offset, 8 * 512);
	ck_assert_uint_eq(req.len, 4096);
	ck_assert_uint_eq(req.niov, 1);
	ck_assert_ptr_eq(req.iov[0].iov_base, data);
	ck_assert_ptr_eq(req.status, status);
	ck_assert_uint_eq(virtio_blk__used_len(&req, VIRTIO_BLK_S_OK), 4097);
	ck_assert_uint_eq(virtio_blk__used_len(&req, VIRTIO_BLK_S_IOERR), 1);
}
END_TEST

START_TEST(test_parse_write)
{
	ck_assert_int_eq(parse3(VIRTIO_BLK_T_OUT, 2040, 4096, false, &lim512),
			 VIRTIO_BLK_S_OK);
	ck_assert_uint_eq(req.len, 4096);
	ck_assert_uint_eq(virtio_blk__used_len(&req, VIRTIO_BLK_S_OK), 1);
}
END_TEST

/* Header split over two descriptors, data sharing the status's one. */
START_TEST(test_parse_any_layout)
{
	chain_reset();
	hdr(VIRTIO_BLK_T_IN, 1);
	add(hdrbuf, 8, false);
	add(hdrbuf + 8, 8, false);
	add(data, 1024, true);
	add(data + 1024, 512 + 1, true);
	ck_assert_int_eq(virtio_blk__parse(&pchain, &lim512, piov, &req),
			 VIRTIO_BLK_S_OK);
	ck_assert_uint_eq(req.offset, 512);
	ck_assert_uint_eq(req.len, 1536);
	ck_assert_uint_eq(req.niov, 2);
	ck_assert_uint_eq(req.iov[1].iov_len, 512);
	ck_assert_ptr_eq(req.status, data + 1024 + 512);

	/* OUT: header and data in one readable descriptor. */
	chain_reset();
	hdr(VIRTIO_BLK_T_OUT, 0);
	add(hdrbuf, 16 + 32, false);	/* 16 header + 32 data: misaligned */
	add(status, 1, true);
	ck_assert_int_eq(virtio_blk__parse(&pchain, &lim512, piov, &req),
			 VIRTIO_BLK_S_IOERR);
	chain_reset();
	hdr(VIRTIO_BLK_T_OUT, 0);
	add(hdrbuf, 16, false);
	add(data, 16, false);
	add(data + 16, 512 - 16, false);
	add(status, 1, true);
	ck_assert_int_eq(virtio_blk__parse(&pchain, &lim512, piov, &req),
			 VIRTIO_BLK_S_OK);
	ck_assert_uint_eq(req.niov, 2);
	ck_assert_uint_eq(req.len, 512);
}
END_TEST

START_TEST(test_parse_flush_get_id)
{
	ck_assert_int_eq(parse3(VIRTIO_BLK_T_FLUSH, 0, 0, false, &lim512),
			 VIRTIO_BLK_S_OK);
	ck_assert_int_eq(parse3(VIRTIO_BLK_T_GET_ID, 0, 20, true, &lim512),
			 VIRTIO_BLK_S_OK);
	ck_assert_uint_eq(req.len, VIRTIO_BLK_ID_BYTES);
	ck_assert_int_eq(parse3(VIRTIO_BLK_T_GET_ID, 0, 64, true, &lim512),
			 VIRTIO_BLK_S_OK);
	ck_assert_uint_eq(req.len, VIRTIO_BLK_ID_BYTES);
	ck_assert_uint_eq(req.iov[0].iov_len, VIRTIO_BLK_ID_BYTES);
}
END_TEST

START_TEST(test_parse_discard_wz)
{
	/* The header alone, no segment: an error. */
	ck_assert_int_eq(parse3(VIRTIO_BLK_T_DISCARD, 0, 0, false, &lim512),
			 VIRTIO_BLK_S_IOERR);
	chain_reset();
	hdr(VIRTIO_BLK_T_DISCARD, 0);
	seg(16, 32, 0);
	add(hdrbuf, 32, false);
	add(status, 1, true);
	ck_assert_int_eq(virtio_blk__parse(&pchain, &lim512, piov, &req),
			 VIRTIO_BLK_S_OK);
	ck_assert_uint_eq(req.offset, 16 * 512);
	ck_assert_uint_eq(req.len, 32 * 512);
	hdr(VIRTIO_BLK_T_WRITE_ZEROES, 0);
	seg(0, 8, VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP);
	ck_assert_int_eq(virtio_blk__parse(&pchain, &lim512, piov, &req),
			 VIRTIO_BLK_S_OK);
	ck_assert_uint_eq(req.flags, VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP);
}
END_TEST

/* The request with one thing wrong, and the status it must get. */
enum shape { S_STD, S_NO_STATUS, S_EMPTY_STATUS, S_SHORT_HDR, S_OUTDATA_IN,
	     S_INDATA_OUT, S_SEGS };

static const struct {
	const char *what;
	enum shape shape;
	uint32_t type;
	uint64_t sector;
	uint32_t len;
	bool wdata;
	bool ro;
	uint32_t blk_size;
	uint64_t seg_sector;
	uint32_t seg_n, seg_flags, nsegs;
	bool no_discard;
	int want;
} bad_req[] = {
	{ "no status byte", S_NO_STATUS, VIRTIO_BLK_T_IN, 0, 512, true, .want = -EINVAL },
	{ "zero-length status", S_EMPTY_STATUS, VIRTIO_BLK_T_IN, 0, 512, true, .want = -EINVAL },
	{ "short header", S_SHORT_HDR, VIRTIO_BLK_T_IN, 0, 512, true, .want = VIRTIO_BLK_S_IOERR },
	{ "read past the end", S_STD, VIRTIO_BLK_T_IN, 2048, 512, true, .want = VIRTIO_BLK_S_IOERR },
	{ "read straddles the end", S_STD, VIRTIO_BLK_T_IN, 2047, 1024, true, .want = VIRTIO_BLK_S_IOERR },
	{ "sector overflows", S_STD, VIRTIO_BLK_T_IN, ~0ULL, 512, true, .want = VIRTIO_BLK_S_IOERR },
	{ "read not 512-multiple", S_STD, VIRTIO_BLK_T_IN, 0, 100, true, .want = VIRTIO_BLK_S_IOERR },
	{ "read with device-readable data", S_OUTDATA_IN, VIRTIO_BLK_T_IN, 0, 512, false, .want = VIRTIO_BLK_S_IOERR },
	{ "write to read-only", S_STD, VIRTIO_BLK_T_OUT, 0, 512, false, .ro = true, .want = VIRTIO_BLK_S_IOERR },
	{ "write with writable data", S_INDATA_OUT, VIRTIO_BLK_T_OUT, 0, 512, true, .want = VIRTIO_BLK_S_IOERR },
	{ "write past the end", S_STD, VIRTIO_BLK_T_OUT, 2048, 512, false, .want = VIRTIO_BLK_S_IOERR },
	{ "4K disk, odd sector", S_STD, VIRTIO_BLK_T_IN, 1, 4096, true, .blk_size = 4096, .want = VIRTIO_BLK_S_IOERR },
	{ "4K disk, 512 bytes", S_STD, VIRTIO_BLK_T_IN, 0, 512, true, .blk_size = 4096, .want = VIRTIO_BLK_S_IOERR },
	{ "flush with data", S_STD, VIRTIO_BLK_T_FLUSH, 0, 512, false, .want = VIRTIO_BLK_S_IOERR },
	{ "get-id without buffer", S_STD, VIRTIO_BLK_T_GET_ID, 0, 0, true, .want = VIRTIO_BLK_S_IOERR },
	{ "SCSI command", S_STD, VIRTIO_BLK_T_SCSI_CMD, 0, 0, false, .want = VIRTIO_BLK_S_UNSUPP },
	{ "unknown type", S_STD, 77, 0, 0, false, .want = VIRTIO_BLK_S_UNSUPP },
	{ "barrier bit", S_STD, VIRTIO_BLK_T_IN | VIRTIO_BLK_T_BARRIER, 0, 512, true, .want = VIRTIO_BLK_S_UNSUPP },
	{ "discard not negotiated", S_SEGS, VIRTIO_BLK_T_DISCARD, .seg_n = 8, .nsegs = 1, .no_discard = true, .want = VIRTIO_BLK_S_UNSUPP },
	{ "discard with flags", S_SEGS, VIRTIO_BLK_T_DISCARD, .seg_n = 8, .seg_flags = 1, .nsegs = 1, .want = VIRTIO_BLK_S_UNSUPP },
	{ "discard on read-only", S_SEGS, VIRTIO_BLK_T_DISCARD, .seg_n = 8, .nsegs = 1, .ro = true, .want = VIRTIO_BLK_S_IOERR },
	{ "discard two segments", S_SEGS, VIRTIO_BLK_T_DISCARD, .seg_n = 8, .nsegs = 2, .want = VIRTIO_BLK_S_IOERR },
	{ "discard no segment", S_SEGS, VIRTIO_BLK_T_DISCARD, .nsegs = 0, .want = VIRTIO_BLK_S_IOERR },
	{ "discard zero sectors", S_SEGS, VIRTIO_BLK_T_DISCARD, .seg_n = 0, .nsegs = 1, .want = VIRTIO_BLK_S_IOERR },
	{ "discard too long", S_SEGS, VIRTIO_BLK_T_DISCARD, .seg_n = 1025, .nsegs = 1, .want = VIRTIO_BLK_S_IOERR },
	{ "discard past the end", S_SEGS, VIRTIO_BLK_T_DISCARD, .seg_sector = 2040, .seg_n = 16, .nsegs = 1, .want = VIRTIO_BLK_S_IOERR },
	{ "write-zeroes bad flag", S_SEGS, VIRTIO_BLK_T_WRITE_ZEROES, .seg_n = 8, .seg_flags = 2, .nsegs = 1, .want = VIRTIO_BLK_S_UNSUPP },
};

START_TEST(test_parse_rejects)
{
	struct blk_limits lim = lim512;
	unsigned int i;
	int ret;

	lim.ro = bad_req[_i].ro;
	if (bad_req[_i].blk_size)
		lim.blk_size = bad_req[_i].blk_size;
	if (bad_req[_i].no_discard)
		lim.discard = false;
	chain_reset();
	hdr(bad_req[_i].type, bad_req[_i].sector);
	switch (bad_req[_i].shape) {
	case S_STD:
		ret = parse3(bad_req[_i].type, bad_req[_i].sector,
			     bad_req[_i].len, bad_req[_i].wdata, &lim);
		goto check;
	case S_NO_STATUS:
		add(hdrbuf, 16, false);
		add(data, 512, false);
		break;
	case S_EMPTY_STATUS:
		add(hdrbuf, 16, false);
		add(data, 512, true);
		add(status, 0, true);
		break;
	case S_SHORT_HDR:
		add(hdrbuf, 8, false);
		add(data, 512, true);
		add(status, 1, true);
		break;
	case S_OUTDATA_IN:
		add(hdrbuf, 16, false);
		add(data, 512, false);
		add(data + 512, 512, true);
		add(status, 1, true);
		break;
	case S_INDATA_OUT:
		add(hdrbuf, 16, false);
		add(data, 512, false);
		add(data + 512, 512, true);
		add(status, 1, true);
		break;
	case S_SEGS:
		for (i = 0; i < 2; i++) {
			struct virtio_blk_discard_write_zeroes s = {
				.sector = bad_req[_i].seg_sector,
				.num_sectors = bad_req[_i].seg_n,
				.flags = bad_req[_i].seg_flags,
			};
			memcpy(hdrbuf + 16 + 16 * i, &s, sizeof(s));
		}
		add(hdrbuf, 16 + 16 * bad_req[_i].nsegs, false);
		add(status, 1, true);
		break;
	}
	ret = virtio_blk__parse(&pchain, &lim, piov, &req);
check:
	ck_assert_msg(ret == bad_req[_i].want, "%s: got %d, want %d",
		      bad_req[_i].what, ret, bad_req[_i].want);
	if (ret > 0) {
		ck_assert_uint_eq(req.len, 0);
		ck_assert_ptr_nonnull(req.status);
	}
}
END_TEST

/*
 * seg_max and size_max (advertised as SEG_MAX, SIZE_MAX) bound IN and OUT:
 * more segments or a larger one is IOERR, whatever else is right.
 */
START_TEST(test_parse_segment_limits)
{
	struct blk_limits lim = lim512;
	unsigned int i;

	lim.seg_max = 4;
	lim.size_max = 1024;

	/* 4 segments of 512: the most there may be */
	chain_reset();
	hdr(VIRTIO_BLK_T_IN, 0);
	add(hdrbuf, 16, false);
	for (i = 0; i < 4; i++)
		add(data + 512 * i, 512, true);
	add(status, 1, true);
	ck_assert_int_eq(virtio_blk__parse(&pchain, &lim, piov, &req),
			 VIRTIO_BLK_S_OK);
	ck_assert_uint_eq(req.niov, 4);

	/* a fifth */
	chain_reset();
	hdr(VIRTIO_BLK_T_IN, 0);
	add(hdrbuf, 16, false);
	for (i = 0; i < 5; i++)
		add(data + 512 * i, 512, true);
	add(status, 1, true);
	ck_assert_int_eq(virtio_blk__parse(&pchain, &lim, piov, &req),
			 VIRTIO_BLK_S_IOERR);
	ck_assert_uint_eq(req.len, 0);

	/* one segment larger than size_max, for OUT and IN */
	ck_assert_int_eq(parse3(VIRTIO_BLK_T_OUT, 0, 2048, false, &lim),
			 VIRTIO_BLK_S_IOERR);
	ck_assert_int_eq(parse3(VIRTIO_BLK_T_IN, 0, 2048, true, &lim),
			 VIRTIO_BLK_S_IOERR);
	ck_assert_int_eq(parse3(VIRTIO_BLK_T_OUT, 0, 1024, false, &lim),
			 VIRTIO_BLK_S_OK);

	/* header and data in one descriptor: the data part is what counts */
	lim.size_max = 512;
	chain_reset();
	hdr(VIRTIO_BLK_T_OUT, 0);
	add(data, 16 + 512, false);
	memcpy(data, hdrbuf, 16);
	add(status, 1, true);
	ck_assert_int_eq(virtio_blk__parse(&pchain, &lim, piov, &req),
			 VIRTIO_BLK_S_OK);
	ck_assert_uint_eq(req.len, 512);
	chain_reset();
	add(data, 16 + 1024, false);
	add(status, 1, true);
	ck_assert_int_eq(virtio_blk__parse(&pchain, &lim, piov, &req),
			 VIRTIO_BLK_S_IOERR);
}
END_TEST

/*
 * The bounce budget: misaligned requests may hold BLK_BOUNCE_BUDGET bytes
 * of bounce buffers per disk; past it -ENOBUFS, and finishing one gives
 * its bytes back.  Aligned ones take nothing.
 */
START_TEST(test_bounce_budget)
{
	static struct blk_backend be = { .direct = true, .lbs = 512 };
	const uint64_t len = BLK_BOUNCE_BUDGET / 4;
	static struct blk_io io[6];
	static uint8_t sector[512] __attribute__((aligned(512)));
	uint8_t *guest = malloc(len + 1);
	struct iovec iov = { guest + 1, len };	/* misaligned */
	struct iovec ok = { sector, sizeof(sector) };
	int i;

	ck_assert_ptr_nonnull(guest);
	for (i = 0; i < 6; i++)
		io[i] = (struct blk_io){ .op = BLK_IO_READ, .len = len,
					 .iov = &iov, .niov = 1 };
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(blk_backend__bounce(&be, &io[i]), 0);
	ck_assert_int_eq(blk_backend__bounce(&be, &io[4]), -ENOBUFS);
	ck_assert_ptr_null(io[4].bounce);
	ck_assert_uint_eq(be.bounce_bytes, BLK_BOUNCE_BUDGET);
	/* an aligned request is not a bounce */
	io[5].iov = &ok;
	io[5].len = 512;
	ck_assert_int_eq(blk_backend__bounce(&be, &io[5]), 0);
	ck_assert_ptr_null(io[5].bounce);
	blk_backend__finish(&be, &io[0], len);
	ck_assert_int_eq(blk_backend__bounce(&be, &io[4]), 0);
	for (i = 1; i < 5; i++)
		blk_backend__finish(&be, &io[i], len);
	ck_assert_uint_eq(be.bounce_bytes, 0);
	free(guest);
}
END_TEST

/* ---- the device on its transport ----------------------------------- */

#define MEM_SIZE	0x100000ULL
#define QS		16
#define DESC		0x1000ULL
#define AVAIL		0x2000ULL
#define USED		0x3000ULL
#define HDR		0x8000ULL
#define STATUS		0x8800ULL
#define BUF		0x10000ULL		/* 4K-aligned data */
#define DISK_SIZE	(1 << 20)

static uint8_t *gmem;
static char disk_path[] = "./test_virtio_blk.XXXXXX";
static struct virtio_blk *blk;
static struct virtio_mmio *mmio;
static int irq_level, irq_raises;
static uint16_t avail_idx;

static void *gtranslate(void *opaque, uint64_t gpa, uint64_t len)
{
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

static uint32_t rd(uint64_t off)
{
	uint32_t v;

	virtio_mmio__ops.read(mmio, off, &v, 4);
	return v;
}

static void wr(uint64_t off, uint32_t v)
{
	virtio_mmio__ops.write(mmio, off, &v, 4);
}

static void make_device(bool ro)
{
	struct virtq_mem mem = { .translate = gtranslate };
	struct virtio_blk_params p = {
		.path = disk_path, .ro = ro, .nqueues = 2,
		.backend = &blk_backend_kernel_ops,
	};
	char err[256];

	blk = virtio_blk__create(&p, err, sizeof(err));
	ck_assert_msg(blk != NULL, "%s", err);
	mmio = virtio_mmio__create(virtio_blk__dev(blk), &mem, 0, 5, set_irq,
				   NULL);
	ck_assert_ptr_nonnull(mmio);
}

static void dev_setup(void)
{
	int fd = mkstemp(disk_path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, DISK_SIZE), 0);
	close(fd);
	gmem = calloc(1, MEM_SIZE);
	ck_assert_ptr_nonnull(gmem);
	irq_level = irq_raises = 0;
	avail_idx = 0;
	make_device(false);
}

static void dev_teardown(void)
{
	virtio_mmio__destroy(mmio);
	virtio_blk__destroy(blk);
	unlink(disk_path);
	strcpy(disk_path, "./test_virtio_blk.XXXXXX");
	free(gmem);
}

static void setup_queue(unsigned int q, uint32_t num, uint64_t desc)
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
static void driver_init_refusing(uint64_t refuse)
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
	setup_queue(0, QS, DESC);
	wr(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			       VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET, 0);
}

static void driver_init(void)
{
	driver_init_refusing(0);
}

static struct vring_desc *gdesc(unsigned int i)
{
	return (struct vring_desc *)(gmem + DESC) + i;
}

static struct vring_used *gused(void)
{
	return (struct vring_used *)(gmem + USED);
}

/*
 * Submits header | data | status on queue 0 and waits for it; returns
 * the status byte (0xff if it never came).  Descriptors 0, 1, 2.
 */
static int request(uint32_t type, uint64_t sector, uint64_t buf,
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

START_TEST(test_identity)
{
	ck_assert_uint_eq(rd(VIRTIO_MMIO_MAGIC_VALUE), VIRTIO_MMIO_MAGIC);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_VERSION), 2);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_DEVICE_ID), 2);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_VENDOR_ID), VIRTIO_MMIO_VENDOR);
	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_DEVICE_FEATURES) & 1, 1); /* VERSION_1 */
	wr(VIRTIO_MMIO_QUEUE_SEL, 0);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_QUEUE_NUM_MAX), VIRTIO_BLK_QUEUE_SIZE);
	wr(VIRTIO_MMIO_QUEUE_SEL, 2);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_QUEUE_NUM_MAX), 0);	/* no queue 2 */
}
END_TEST

START_TEST(test_config_space)
{
	uint64_t cap;
	uint32_t v;
	uint16_t nq;

	virtio_mmio__ops.read(mmio, VIRTIO_MMIO_CONFIG_OFF, &cap, 8);
	ck_assert_uint_eq(cap, DISK_SIZE / 512);
	virtio_mmio__ops.read(mmio, VIRTIO_MMIO_CONFIG_OFF + 20, &v, 4);
	ck_assert(v == 512 || v == 4096);			/* blk_size */
	virtio_mmio__ops.read(mmio, VIRTIO_MMIO_CONFIG_OFF + 34, &nq, 2);
	ck_assert_uint_eq(nq, 2);				/* num_queues */
	/* Past the config struct: zeros, no crash. */
	v = 0xdead;
	virtio_mmio__ops.read(mmio, VIRTIO_MMIO_WINDOW - 4, &v, 4);
	ck_assert_uint_eq(v, 0);
}
END_TEST

START_TEST(test_bad_register_access)
{
	uint32_t v = 0x1234;
	uint8_t b = 0x55;

	/* Unknown offset, wrong width, misaligned: ignored, reads 0. */
	ck_assert_uint_eq(rd(0x0f0), 0);
	wr(0x0f0, 1);
	virtio_mmio__ops.read(mmio, VIRTIO_MMIO_MAGIC_VALUE, &b, 1);
	ck_assert_uint_eq(b, 0);
	virtio_mmio__ops.read(mmio, VIRTIO_MMIO_MAGIC_VALUE + 2, &v, 4);
	ck_assert_uint_eq(v, 0);
	b = 0xff;
	virtio_mmio__ops.write(mmio, VIRTIO_MMIO_STATUS, &b, 1);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_STATUS), 0);
	/* Config space is read-only. */
	v = 0;
	virtio_mmio__ops.write(mmio, VIRTIO_MMIO_CONFIG_OFF, &v, 4);
	virtio_mmio__ops.read(mmio, VIRTIO_MMIO_CONFIG_OFF, &v, 4);
	ck_assert_uint_eq(v, DISK_SIZE / 512);
	/* Notify before DRIVER_OK: nothing happens. */
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1000);
}
END_TEST

START_TEST(test_features_refused)
{
	wr(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	/* Legacy driver: no VERSION_1. */
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, 1u << VIRTIO_BLK_F_FLUSH);
	wr(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			       VIRTIO_CONFIG_S_FEATURES_OK);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_FEATURES_OK, 0);
	/* A feature we never offered. */
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, 1 | 1u << 3);
	wr(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			       VIRTIO_CONFIG_S_FEATURES_OK);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_FEATURES_OK, 0);
	/* DRIVER_OK without FEATURES_OK: NEEDS_RESET, config interrupt. */
	wr(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			       VIRTIO_CONFIG_S_DRIVER_OK);
	ck_assert(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_CONFIG);
	ck_assert_int_eq(irq_level, 1);
	/* Reset clears it all. */
	wr(VIRTIO_MMIO_STATUS, 0);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_STATUS), 0);
	ck_assert_int_eq(irq_level, 0);
}
END_TEST

static const struct {
	const char *what;
	uint32_t num;
	uint64_t desc;
} bad_queue[] = {
	{ "size not a power of two", 12, DESC },
	{ "size above QueueNumMax", 512, DESC },
	{ "size 0", 0, DESC },
	{ "ring outside RAM", QS, MEM_SIZE },
	{ "ring above 4 GiB", QS, 1ULL << 40 },
	{ "misaligned ring", QS, DESC + 4 },
};

START_TEST(test_bad_queue_setup)
{
	wr(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	setup_queue(0, bad_queue[_i].num, bad_queue[_i].desc);
	ck_assert_msg(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET,
		      "%s accepted", bad_queue[_i].what);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_QUEUE_READY), 0);
}
END_TEST

START_TEST(test_io)
{
	uint8_t *buf = gmem + BUF;
	unsigned int i;

	driver_init();
	for (i = 0; i < 8192; i++)
		buf[i] = i * 7 + 3;
	ck_assert_int_eq(request(VIRTIO_BLK_T_OUT, 16, BUF, 8192, false), 0);
	ck_assert_int_eq(irq_level, 1);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_VRING);
	wr(VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_VRING);
	ck_assert_int_eq(irq_level, 0);
	ck_assert_uint_eq(gused()->ring[0].len, 1);

	memset(buf, 0, 8192);
	ck_assert_int_eq(request(VIRTIO_BLK_T_IN, 16, BUF, 8192, true), 0);
	ck_assert_uint_eq(gused()->ring[1].len, 8193);
	for (i = 0; i < 8192; i++)
		ck_assert_uint_eq(buf[i], (uint8_t)(i * 7 + 3));

	/* A misaligned guest buffer goes through the bounce buffer. */
	memset(buf, 0, 8192);
	ck_assert_int_eq(request(VIRTIO_BLK_T_IN, 16, BUF + 1, 512, true), 0);
	for (i = 0; i < 512; i++)
		ck_assert_uint_eq(buf[i + 1], (uint8_t)(i * 7 + 3));

	ck_assert_int_eq(request(VIRTIO_BLK_T_FLUSH, 0, 0, 0, false), 0);
	ck_assert_int_eq(request(VIRTIO_BLK_T_GET_ID, 0, BUF, 20, true), 0);
	ck_assert_str_eq((char *)buf, "gpin-blk0");

	/* Past the end: IOERR, and the VMM goes on. */
	ck_assert_int_eq(request(VIRTIO_BLK_T_IN, DISK_SIZE / 512, BUF, 512,
				 true), VIRTIO_BLK_S_IOERR);
	ck_assert_int_eq(request(99, 0, 0, 0, false), VIRTIO_BLK_S_UNSUPP);
}
END_TEST

START_TEST(test_write_zeroes)
{
	struct virtio_blk_discard_write_zeroes *s = (void *)(gmem + BUF + 4096);
	uint8_t *buf = gmem + BUF;
	unsigned int i;

	driver_init();
	memset(buf, 0xaa, 4096);
	ck_assert_int_eq(request(VIRTIO_BLK_T_OUT, 0, BUF, 4096, false), 0);
	*s = (struct virtio_blk_discard_write_zeroes) { .sector = 0, .num_sectors = 8 };
	ck_assert_int_eq(request(VIRTIO_BLK_T_WRITE_ZEROES, 0, BUF + 4096, 16,
				 false), 0);
	ck_assert_int_eq(request(VIRTIO_BLK_T_IN, 0, BUF, 4096, true), 0);
	for (i = 0; i < 4096; i++)
		ck_assert_uint_eq(buf[i], 0);
	ck_assert_int_eq(request(VIRTIO_BLK_T_DISCARD, 0, BUF + 4096, 16,
				 false), 0);
}
END_TEST

START_TEST(test_read_only)
{
	uint32_t f;

	virtio_mmio__destroy(mmio);
	virtio_blk__destroy(blk);
	make_device(true);
	f = rd(VIRTIO_MMIO_DEVICE_FEATURES);
	ck_assert(f & 1u << VIRTIO_BLK_F_RO);
	ck_assert(!(f & 1u << VIRTIO_BLK_F_DISCARD));
	driver_init();
	ck_assert_int_eq(request(VIRTIO_BLK_T_IN, 0, BUF, 512, true), 0);
	ck_assert_int_eq(request(VIRTIO_BLK_T_OUT, 0, BUF, 512, false),
			 VIRTIO_BLK_S_IOERR);
}
END_TEST

/* What virtio_blk__counters() reported, in order. */
struct seen_counter {
	char dev[16], name[16];
	uint64_t value;
};
static struct seen_counter seen[8];
static unsigned int nseen;

static void collect(void *opaque, const char *dev, const char *name,
		    uint64_t value)
{
	ck_assert_ptr_eq(opaque, seen);
	ck_assert_uint_lt(nseen, sizeof(seen) / sizeof(seen[0]));
	snprintf(seen[nseen].dev, sizeof(seen[nseen].dev), "%s", dev);
	snprintf(seen[nseen].name, sizeof(seen[nseen].name), "%s", name);
	seen[nseen++].value = value;
}

static void expect_counter(unsigned int i, const char *dev, const char *name,
			   uint64_t value)
{
	ck_assert_str_eq(seen[i].dev, dev);
	ck_assert_str_eq(seen[i].name, name);
	ck_assert_uint_eq(seen[i].value, value);
}

/*
 * The counters of vm.counters and SIGUSR1 while the device runs: every
 * request counts, only completed READ/WRITE data counts as bytes, and
 * IOERR and UNSUPP count as errors; queue 1 saw nothing.
 */
START_TEST(test_counters)
{
	struct vm vm = { .ndisks = 1, .disks = { blk } };
	char *text = NULL;
	size_t len = 0;
	FILE *mem;

	driver_init();
	ck_assert_int_eq(request(VIRTIO_BLK_T_OUT, 16, BUF, 8192, false), 0);
	ck_assert_int_eq(request(VIRTIO_BLK_T_IN, 16, BUF, 4096, true), 0);
	ck_assert_int_eq(request(VIRTIO_BLK_T_FLUSH, 0, 0, 0, false), 0);
	ck_assert_int_eq(request(VIRTIO_BLK_T_IN, DISK_SIZE / 512, BUF, 512,
				 true), VIRTIO_BLK_S_IOERR);
	ck_assert_int_eq(request(99, 0, 0, 0, false), VIRTIO_BLK_S_UNSUPP);

	nseen = 0;
	vm__counters(&vm, collect, seen);
	ck_assert_uint_eq(nseen, 6);
	expect_counter(0, "blk0-q0", "requests", 5);
	expect_counter(1, "blk0-q0", "bytes", 8192 + 4096);
	expect_counter(2, "blk0-q0", "errors", 2);
	expect_counter(3, "blk0-q1", "requests", 0);
	expect_counter(4, "blk0-q1", "bytes", 0);
	expect_counter(5, "blk0-q1", "errors", 0);

	mem = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(mem);
	vm__print_disk_stats(&vm, mem);
	ck_assert_int_eq(fclose(mem), 0);
	ck_assert_str_eq(text,
		"gpin-vmm: blk0-q0: 5 requests, 12288 bytes, 2 errors\n"
		"gpin-vmm: blk0-q1: 0 requests, 0 bytes, 0 errors\n");
	free(text);
}
END_TEST

/* A looping chain marks the device broken; a reset brings it back. */
START_TEST(test_broken_ring_needs_reset)
{
	struct vring_avail *a = (struct vring_avail *)(gmem + AVAIL);

	driver_init();
	*gdesc(0) = (struct vring_desc) { HDR, 16, VRING_DESC_F_NEXT, 1 };
	*gdesc(1) = (struct vring_desc) { HDR, 16, VRING_DESC_F_NEXT, 0 };
	a->ring[0] = 0;
	a->idx = ++avail_idx;
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	ck_assert(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET);
	ck_assert(rd(VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG);
	/* Further notifies are ignored. */
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	ck_assert_uint_eq(gused()->idx, 0);

	memset(gmem, 0, 0x4000);
	avail_idx = 0;
	driver_init();
	ck_assert_int_eq(request(VIRTIO_BLK_T_FLUSH, 0, 0, 0, false), 0);
}
END_TEST

/* The avail index jumps far ahead: NEEDS_RESET, not a huge loop. */
START_TEST(test_avail_jump_needs_reset)
{
	struct vring_avail *a = (struct vring_avail *)(gmem + AVAIL);

	driver_init();
	a->idx = 0x8000;
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	ck_assert(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET);
}
END_TEST

START_TEST(test_second_queue)
{
	driver_init();
	/* Queue 1 was not set up: a notify for it is ignored. */
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	ck_assert_uint_eq(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET, 0);
}
END_TEST

/* The event fields of queue 0, where the specification puts them. */
static uint16_t *gused_event(void)
{
	return (uint16_t *)(gmem + AVAIL + 4 + 2 * QS);
}

static uint16_t *gavail_event(void)
{
	return (uint16_t *)(gmem + USED + 4 + 8 * QS);
}

/*
 * One GET_ID request, completed on the notifying thread, so the interrupt
 * decision is made by the time it returns; then ACKs.  Returns whether
 * the device raised the interrupt for it.
 */
static bool get_id_irq(void)
{
	int before = __atomic_load_n(&irq_raises, __ATOMIC_SEQ_CST);
	bool raised;

	ck_assert_int_eq(request(VIRTIO_BLK_T_GET_ID, 0, BUF, 20, true), 0);
	raised = __atomic_load_n(&irq_raises, __ATOMIC_SEQ_CST) != before;
	wr(VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_VRING);
	ck_assert_int_eq(irq_level, 0);
	return raised;
}

/* EVENT_IDX offered, negotiated, and the queue then follows the driver's. */
START_TEST(test_event_idx)
{
	struct vring_avail *a = (struct vring_avail *)(gmem + AVAIL);

	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	ck_assert(rd(VIRTIO_MMIO_DEVICE_FEATURES) & 1u << VIRTIO_RING_F_EVENT_IDX);
	*gavail_event() = 0xbeef;
	driver_init();
	/* DRIVER_OK: notify for the first chain, whatever the ring held. */
	ck_assert_uint_eq(*gavail_event(), 0);
	*gused_event() = 1;
	ck_assert(!get_id_irq());			/* used 0 */
	ck_assert_uint_eq(*gavail_event(), 1);	/* re-armed after serving */
	ck_assert(get_id_irq());			/* used 1 */
	ck_assert(!get_id_irq());			/* 1 was reported */
	/* NO_INTERRUPT is not ours to look at now. */
	a->flags = VRING_AVAIL_F_NO_INTERRUPT;
	*gused_event() = 3;
	ck_assert(get_id_irq());
	ck_assert_uint_eq(gused()->idx, 4);
	ck_assert_uint_eq(*gavail_event(), 4);
	ck_assert_uint_eq(gused()->flags, 0);
}
END_TEST

/* A driver that refuses EVENT_IDX gets the NO_INTERRUPT behaviour. */
START_TEST(test_event_idx_refused)
{
	struct vring_avail *a = (struct vring_avail *)(gmem + AVAIL);

	*gavail_event() = 0xbeef;
	driver_init_refusing(1ULL << VIRTIO_RING_F_EVENT_IDX);
	*gused_event() = 100;
	ck_assert(get_id_irq());
	ck_assert(get_id_irq());
	a->flags = VRING_AVAIL_F_NO_INTERRUPT;
	*gused_event() = 2;
	ck_assert(!get_id_irq());
	ck_assert_uint_eq(gused()->idx, 3);
	ck_assert_uint_eq(*gavail_event(), 0xbeef);	/* never written */
	ck_assert_uint_eq(gused()->flags, 0);
}
END_TEST

/* ---- --disk ---------------------------------------------------------- */

START_TEST(test_disk_option)
{
	struct disk_options d;
	char err[256];

	ck_assert_int_eq(options__parse_disk("/dev/vdb", &d, err, sizeof(err)), 0);
	ck_assert_str_eq(d.path, "/dev/vdb");
	ck_assert(!d.ro);
	ck_assert_int_eq(d.pin, DISK_PIN_DEFAULT);
	ck_assert_int_eq(d.io, DISK_IO_VCPU);
	ck_assert_uint_eq(d.queues, 0);
	ck_assert_int_eq(options__parse_disk("img,ro,pin=kernel,queues=4,io=iothread",
					     &d, err, sizeof(err)), 0);
	ck_assert_str_eq(d.path, "img");
	ck_assert(d.ro);
	ck_assert_uint_eq(d.queues, 4);
	ck_assert_int_eq(d.io, DISK_IO_IOTHREAD);
	ck_assert_int_eq(d.pin, DISK_PIN_KERNEL);
	ck_assert_int_eq(options__parse_disk("img,pin=fast", &d, err,
					     sizeof(err)), 0);
	ck_assert_int_eq(d.pin, DISK_PIN_FAST);
	ck_assert_int_eq(options__parse_disk("img,pin=locked", &d, err,
					     sizeof(err)), 0);
	ck_assert_int_eq(d.pin, DISK_PIN_LOCKED);
	ck_assert(!d.no_event_idx);
	ck_assert_int_eq(options__parse_disk("img,event_idx=off", &d, err,
					     sizeof(err)), 0);
	ck_assert(d.no_event_idx);
	ck_assert_int_eq(options__parse_disk("img,event_idx=on", &d, err,
					     sizeof(err)), 0);
	ck_assert(!d.no_event_idx);
	ck_assert_int_eq(d.transport, DISK_TRANSPORT_MMIO);
	ck_assert_int_eq(options__parse_disk("img,transport=pci", &d, err,
					     sizeof(err)), 0);
	ck_assert_int_eq(d.transport, DISK_TRANSPORT_PCI);
	ck_assert_int_eq(options__parse_disk("img,transport=mmio", &d, err,
					     sizeof(err)), 0);
	ck_assert_int_eq(d.transport, DISK_TRANSPORT_MMIO);
}
END_TEST

static const char *const bad_disk[] = {
	"", ",ro", "img,rw", "img,queues=0", "img,queues=65", "img,queues=x",
	"img,queues=", "img,io=aio", "img,pin=none", "img,pin=", "img,pin=Fast",
	"img,foo=1", "img,event_idx=", "img,event_idx=yes", "img,transport=",
	"img,transport=PCI", "img,transport=isa",
};

START_TEST(test_disk_option_rejects)
{
	struct disk_options d;
	char err[256] = "";

	ck_assert_msg(options__parse_disk(bad_disk[_i], &d, err, sizeof(err)) == -1,
		      "'%s' accepted", bad_disk[_i]);
	ck_assert_msg(err[0], "no reason for '%s'", bad_disk[_i]);
}
END_TEST

/* pin=fast|locked without gpin.ko: the disk is refused with a reason. */
START_TEST(test_gpin_backend_needs_module)
{
	const struct blk_backend_ops *ops[] = {
		&blk_backend_gpin_fast_ops, &blk_backend_gpin_locked_ops,
	};
	char path[] = "./test_gpin_backend.XXXXXX", err[256] = "";
	struct virtio_blk_params p = { .path = path, .nqueues = 2 };
	int fd;

	if (access("/dev/gpin", F_OK) == 0)
		return;		/* gpin.ko loaded: the rig tests cover it */
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 1 << 20), 0);
	close(fd);
	p.backend = ops[_i];
	ck_assert_ptr_null(virtio_blk__create(&p, err, sizeof(err)));
	ck_assert_msg(strstr(err, ops[_i]->name), "%s", err);
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
	ck_assert_uint_eq(o.ndisks, VM_DISKS_MAX);
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
	ck_assert_uint_eq(o.churn_kib, 0);
	argv[3] = "--churn";
	ck_assert_int_eq(options__parse(&o, 4, argv, err, sizeof(err)), 0);
	ck_assert_uint_eq(o.churn_kib, 64);
	argv[3] = "--churn=256";
	ck_assert_int_eq(options__parse(&o, 4, argv, err, sizeof(err)), 0);
	ck_assert_uint_eq(o.churn_kib, 256);
	argv[3] = "--churn=2";
	ck_assert_int_eq(options__parse(&o, 4, argv, err, sizeof(err)), -1);
	argv[3] = "--churn=x";
	ck_assert_int_eq(options__parse(&o, 4, argv, err, sizeof(err)), -1);
}
END_TEST

static Suite *virtio_blk_suite(void)
{
	Suite *s = suite_create("virtio_blk");
	TCase *tc;

	tc = tcase_create("options");
	tcase_add_test(tc, test_disk_option);
	tcase_add_loop_test(tc, test_disk_option_rejects, 0,
			    sizeof(bad_disk) / sizeof(bad_disk[0]));
	tcase_add_test(tc, test_disk_option_count);
	tcase_add_loop_test(tc, test_gpin_backend_needs_module, 0, 2);
	tcase_add_test(tc, test_churn_option);
	suite_add_tcase(s, tc);

	tc = tcase_create("parse");
	tcase_add_test(tc, test_parse_read);
	tcase_add_test(tc, test_parse_write);
	tcase_add_test(tc, test_parse_any_layout);
	tcase_add_test(tc, test_parse_flush_get_id);
	tcase_add_test(tc, test_parse_discard_wz);
	tcase_add_loop_test(tc, test_parse_rejects, 0,
			    sizeof(bad_req) / sizeof(bad_req[0]));
	tcase_add_test(tc, test_parse_segment_limits);
	tcase_add_test(tc, test_bounce_budget);
	suite_add_tcase(s, tc);

	tc = tcase_create("transport");
	tcase_add_checked_fixture(tc, dev_setup, dev_teardown);
	tcase_add_test(tc, test_identity);
	tcase_add_test(tc, test_config_space);
	tcase_add_test(tc, test_bad_register_access);
	tcase_add_test(tc, test_features_refused);
	tcase_add_loop_test(tc, test_bad_queue_setup, 0,
			    sizeof(bad_queue) / sizeof(bad_queue[0]));
	tcase_add_test(tc, test_second_queue);
	suite_add_tcase(s, tc);

	tc = tcase_create("device");
	tcase_add_checked_fixture(tc, dev_setup, dev_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_io);
	tcase_add_test(tc, test_counters);
	tcase_add_test(tc, test_write_zeroes);
	tcase_add_test(tc, test_read_only);
	tcase_add_test(tc, test_broken_ring_needs_reset);
	tcase_add_test(tc, test_avail_jump_needs_reset);
	tcase_add_test(tc, test_event_idx);
	tcase_add_test(tc, test_event_idx_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(virtio_blk_suite());
}
