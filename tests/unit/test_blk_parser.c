// SPDX-License-Identifier: GPL-2.0-only
/*
 * The virtio-blk request parser, rejection by rejection, and the bounce
 * budget of the backends' shared helpers.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devices/blk_backend.h"
#include "devices/virtio_blk.h"
#include "devices/virtio_blk_req.h"
#include "unit.h"

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
	blk_backend__finish(&be, &io[0], len, true);
	ck_assert_int_eq(blk_backend__bounce(&be, &io[4]), 0);
	for (i = 1; i < 5; i++)
		blk_backend__finish(&be, &io[i], len, true);
	ck_assert_uint_eq(be.bounce_bytes, 0);
	free(guest);
}
END_TEST

static Suite *blk_parser_suite(void)
{
	Suite *s = suite_create("blk_parser");
	TCase *tc;

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
	return s;
}

int main(void)
{
	return unit_run(blk_parser_suite());
}
