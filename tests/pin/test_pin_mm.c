// SPDX-License-Identifier: GPL-2.0
/*
 * gpin.ko against the rest of memory management, in every mode: a pinned
 * page is never paged out (MADV_PAGEOUT) or migrated (move_pages) from
 * under its pin, however the two race; KSM-merged pages are unshared
 * before they are pinned and never merged while pinned; 1 GiB hugetlb
 * pages (pud leaves) and mTHP (pte-mapped large folios, 6.8+) pin right;
 * and the per-folio reference limit (folio_ref_limit) refuses the pin that
 * would pass it.  Run with test_pin.c in the test host, whose set-up
 * (tests/pin/in-host.sh, run-in-rig.sh) gives it swap on zram, two NUMA
 * nodes (numa=fake=2) and one 1 GiB huge page; each case skips with a
 * reason when its piece is missing.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libgpin.h"
#include "test_pin.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif
#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT	26
#endif
#define MAP_HUGE_1GB_	(30 << MAP_HUGE_SHIFT)
#define GPAGE		(1UL << 30)
#define MPOL_MF_MOVE_	(1 << 1)

#define THP_DIR		"/sys/kernel/mm/transparent_hugepage/"
#define KSM_DIR		"/sys/kernel/mm/ksm/"
#define REF_LIMIT	"/sys/module/gpin/parameters/folio_ref_limit"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- sysfs knobs, saved before the test case and restored after -------- */

static struct knob {
	const char *path;
	char saved[64];
} knobs[] = {
	{ .path = THP_DIR "hugepages-64kB/enabled" },
	{ .path = THP_DIR "hugepages-2048kB/enabled" },
	{ .path = KSM_DIR "run" },
	{ .path = KSM_DIR "pages_to_scan" },
	{ .path = KSM_DIR "sleep_millisecs" },
	{ .path = REF_LIMIT },
};

/*
 * The value of a sysfs file in @buf: the [selected] word of a choice
 * ("always [madvise] never"), else the first line.  -1 when unreadable.
 */
static int knob_read(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	char line[256], *open, *close;

	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	line[strcspn(line, "\n")] = 0;
	open = strchr(line, '[');
	close = open ? strchr(open, ']') : NULL;
	if (open && close) {
		*close = 0;
		memmove(line, open + 1, strlen(open + 1) + 1);
	}
	if (strlen(line) >= size)
		return -1;
	strcpy(buf, line);
	return 0;
}

/* 0, or -errno of the write. */
static int knob_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static unsigned long knob_ulong(const char *path)
{
	char buf[64];

	return knob_read(path, buf, sizeof(buf)) ? 0 : strtoul(buf, NULL, 0);
}

/* Unchecked fixture: runs in the test runner, around the whole case. */
static void knobs_save(void)
{
	size_t i;

	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		if (knob_read(knobs[i].path, knobs[i].saved,
			      sizeof(knobs[i].saved)))
			knobs[i].saved[0] = 0;
}

static void knobs_restore(void)
{
	size_t i;

	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		if (knobs[i].saved[0])
			knob_write(knobs[i].path, knobs[i].saved);
}

/* ---- helpers ------------------------------------------------------------ */

static unsigned long long vmstat(const char *name)
{
	FILE *f = fopen("/proc/vmstat", "r");
	unsigned long long v = 0, x;
	char key[64];

	ck_assert(f);
	while (fscanf(f, "%63s %llu", key, &x) == 2)
		if (!strcmp(key, name))
			v = x;
	fclose(f);
	return v;
}

static bool have_swap(void)
{
	FILE *f = fopen("/proc/swaps", "r");
	char line[256];
	int lines = 0;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		lines++;
	fclose(f);
	return lines > 1;
}

static int nr_nodes(void)
{
	char path[64];
	int n = 0;

	for (;;) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d",
			 n);
		if (access(path, F_OK))
			return n;
		n++;
	}
}

static long move_pages(int count, void **pages, const int *nodes,
		       int *status)
{
	return syscall(SYS_move_pages, 0, (unsigned long)count, pages, nodes,
		       status, MPOL_MF_MOVE_);
}

static unsigned int rnd(unsigned int *seed)
{
	*seed = *seed * 1103515245 + 12345;
	return *seed >> 8;
}

/* The flags of frame @pfn (/proc/kpageflags). */
#define KPF_COMPOUND_HEAD	15
#define KPF_COMPOUND_TAIL	16

static uint64_t kpageflags(uint64_t pfn)
{
	int fd = open("/proc/kpageflags", O_RDONLY);
	uint64_t f = 0;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &f, sizeof(f), pfn * sizeof(f)), sizeof(f));
	close(fd);
	return f;
}

/* Every frame of @pfns is the one pagemap shows for the page now. */
static void assert_mapped(int pm, const char *p, size_t n,
			  const uint64_t *pfns, const char *when, int mode)
{
	uint64_t cur[64];
	size_t i;

	ck_assert(n <= 64);
	ck_assert_int_eq(pagemap_pfns(pm, p, n, cur), 0);
	for (i = 0; i < n; i++)
		ck_assert_msg(cur[i] == pfns[i],
			      "%s: page %zu %s: pinned pfn %#llx, mapped %#llx "
			      "(0: not present)", libgpin_mode_name(mode), i,
			      when, (unsigned long long)pfns[i],
			      (unsigned long long)cur[i]);
}

/* ---- paging out and migrating pinned pages ---------------------------- */

#define RACE_PAGES	64

struct mm_race {
	char *buf;
	volatile int stop;
	unsigned long rounds;
	unsigned long moved;	/* pages move_pages() moved */
	int nodes;
};

static void *pageout_loop(void *arg)
{
	struct mm_race *r = arg;

	while (!r->stop) {
		madvise(r->buf, RACE_PAGES * PAGE, MADV_PAGEOUT);
		r->rounds++;
	}
	return NULL;
}

/* Every page to the next node, round and round; counts pages moved. */
static void *migrate_loop(void *arg)
{
	struct mm_race *r = arg;
	void *pages[RACE_PAGES];
	int nodes[RACE_PAGES], status[RACE_PAGES];
	int i, target = 0;

	for (i = 0; i < RACE_PAGES; i++)
		pages[i] = r->buf + i * PAGE;
	while (!r->stop) {
		target = (target + 1) % r->nodes;
		for (i = 0; i < RACE_PAGES; i++)
			nodes[i] = target;
		if (move_pages(RACE_PAGES, pages, nodes, status) < 0)
			continue;
		for (i = 0; i < RACE_PAGES; i++)
			r->moved += status[i] == target;
		r->rounds++;
	}
	return NULL;
}

/*
 * Pin random pieces of r->buf in @mode for @secs while @fn runs: every pin
 * succeeds, and its frames are the ones mapped right after it and still a
 * moment later.  Unmapping (swap-out, migration) of an anonymous page
 * backs off when it sees a pin (page_try_share_anon_rmap()), so a pinned
 * page stays where it is; a pin taken as a plain reference first and a
 * pin later (the fast walk's old order) could land on a page being
 * unmapped, and pagemap would then show a swap entry or another frame.
 */
static unsigned long pin_against(struct mm_race *r, int mode, double secs,
				 void *(*fn)(void *))
{
	int pm = open("/proc/self/pagemap", O_RDONLY);
	unsigned int seed = 7 + mode;
	unsigned long pins = 0;
	uint64_t pfns[RACE_PAGES];
	double end = now() + secs;
	pthread_t t;

	ck_assert_int_ge(pm, 0);
	ck_assert_int_eq(pthread_create(&t, NULL, fn, r), 0);
	while (now() < end) {
		size_t n = 1 + rnd(&seed) % 32;
		size_t off = rnd(&seed) % (RACE_PAGES - n);
		char *p = r->buf + off * PAGE;
		unsigned int fl = rnd(&seed) & 1 ? GPIN_PIN_WRITE : 0;
		uint32_t h;

		if (rnd(&seed) & 1)
			touch(p, n * PAGE, (int)off);
		ck_assert_msg(!libgpin_pin(g, p, n, mode, fl, pfns, &h, NULL),
			      "%s: pin: %s", libgpin_mode_name(mode),
			      strerror(errno));
		assert_mapped(pm, p, n, pfns, "after the pin", mode);
		usleep(1000);
		assert_mapped(pm, p, n, pfns, "while pinned", mode);
		ck_assert_int_eq(libgpin_unpin(g, h), 0);
		pins++;
	}
	r->stop = 1;
	pthread_join(t, NULL);
	close(pm);
	return pins;
}

START_TEST(test_pageout_race)
{
	struct mm_race r = { 0 };
	unsigned long long out0, out1;
	unsigned long pins;

	if (!have_swap()) {
		fprintf(stderr, "# SKIP: no swap in the test host\n");
		return;
	}
	r.buf = map_aligned(RACE_PAGES * PAGE, HPAGE);
	madvise(r.buf, RACE_PAGES * PAGE, MADV_NOHUGEPAGE);
	touch(r.buf, RACE_PAGES * PAGE, 1);
	out0 = vmstat("pswpout");
	pins = pin_against(&r, _i, 2.0, pageout_loop);
	out1 = vmstat("pswpout");
	fprintf(stderr, "# pageout %s: %lu pins, %lu MADV_PAGEOUT, %llu pages "
		"swapped out\n", libgpin_mode_name(_i), pins, r.rounds,
		out1 - out0);
	ck_assert_msg(out1 > out0, "nothing was paged out: no race");
	munmap(r.buf, RACE_PAGES * PAGE);
}
END_TEST

START_TEST(test_migrate_race)
{
	struct mm_race r = { .nodes = nr_nodes() };
	unsigned long pins;

	if (r.nodes < 2) {
		fprintf(stderr, "# SKIP: one NUMA node (test host without "
			"numa=fake=2)\n");
		return;
	}
	r.buf = map_aligned(RACE_PAGES * PAGE, HPAGE);
	madvise(r.buf, RACE_PAGES * PAGE, MADV_NOHUGEPAGE);
	touch(r.buf, RACE_PAGES * PAGE, 2);
	pins = pin_against(&r, _i, 2.0, migrate_loop);
	fprintf(stderr, "# migrate %s: %lu pins, %lu move_pages, %lu pages "
		"moved\n", libgpin_mode_name(_i), pins, r.rounds, r.moved);
	ck_assert_msg(r.moved > 0, "nothing was migrated: no race");
	munmap(r.buf, RACE_PAGES * PAGE);
}
END_TEST

/*
 * Without a race: pinned pages do not move when asked to, the others do.
 */
START_TEST(test_migrate_pinned)
{
	int pm = open("/proc/self/pagemap", O_RDONLY);
	char *p = map_aligned(16 * PAGE, HPAGE);
	void *pages[16];
	int nodes[16], status[16], before[16], i, tries, moved = 0;
	uint64_t pfns[8];
	uint32_t h;

	if (nr_nodes() < 2) {
		fprintf(stderr, "# SKIP: one NUMA node\n");
		return;
	}
	madvise(p, 16 * PAGE, MADV_NOHUGEPAGE);
	touch(p, 16 * PAGE, 3);
	for (i = 0; i < 16; i++)
		pages[i] = p + i * PAGE;
	ck_assert_int_eq(move_pages(16, pages, NULL, before), 0);
	ck_assert_int_eq(libgpin_pin(g, p, 8, _i, GPIN_PIN_WRITE, pfns, &h, NULL),
			 0);
	for (i = 0; i < 16; i++)
		nodes[i] = !before[i];
	/* a page still in a per-CPU LRU batch cannot move yet: try again */
	for (tries = 0; tries < 10; tries++) {
		ck_assert_int_ge(move_pages(16, pages, nodes, status), 0);
		ck_assert_int_eq(move_pages(16, pages, NULL, status), 0);
		for (moved = 0, i = 8; i < 16; i++)
			moved += status[i] == nodes[i];
		if (moved == 8)
			break;
		usleep(10000);
	}
	for (i = 0; i < 8; i++)
		ck_assert_msg(status[i] == before[i], "%s: pinned page %d "
			      "moved from node %d to %d", libgpin_mode_name(_i),
			      i, before[i], status[i]);
	ck_assert_msg(moved > 0, "no unpinned page moved");
	assert_mapped(pm, p, 8, pfns, "after move_pages", _i);
	ck_assert_int_eq(libgpin_unpin(g, h), 0);
	close(pm);
	munmap(p, 16 * PAGE);
}
END_TEST

/* ---- KSM ---------------------------------------------------------------- */

/* Waits until ksmd has finished @scans more full scans; false on timeout. */
static bool ksm_wait_scans(unsigned long scans, double secs)
{
	unsigned long start = knob_ulong(KSM_DIR "full_scans");
	double end = now() + secs;

	while (knob_ulong(KSM_DIR "full_scans") < start + scans)
		if (now() > end)
			return false;
		else
			usleep(10000);
	return true;
}

/*
 * Two buffers of identical pages, merged by KSM into one page mapped 16
 * times.  A KSM page is never exclusive, so a pin must unshare it first
 * (the fast walk leaves it to the locked path, which breaks COW for a
 * write pin and unshares for a read-only one): the pin gets a private
 * page, the one then mapped, never the KSM page.  While pinned, ksmd does
 * not merge it back (its reference count does not match).
 */
START_TEST(test_ksm)
{
	int pm = open("/proc/self/pagemap", O_RDONLY);
	char *a = map_aligned(16 * PAGE, HPAGE), *b = a + 8 * PAGE;
	uint64_t ksm[16], pa[8], pb[8];
	struct gpin_stats s0, s1;
	uint32_t ha, hb;
	double end;
	int i;

	if (access(KSM_DIR "run", W_OK)) {
		fprintf(stderr, "# SKIP: no KSM\n");
		return;
	}
	madvise(a, 16 * PAGE, MADV_NOHUGEPAGE);
	memset(a, 0x3c, 16 * PAGE);
	ck_assert_int_eq(madvise(a, 16 * PAGE, MADV_MERGEABLE), 0);
	ck_assert_int_eq(knob_write(KSM_DIR "pages_to_scan", "1000"), 0);
	ck_assert_int_eq(knob_write(KSM_DIR "sleep_millisecs", "10"), 0);
	ck_assert_int_eq(knob_write(KSM_DIR "run", "1"), 0);
	end = now() + 30;
	for (;;) {
		ck_assert_int_eq(pagemap_pfns(pm, a, 16, ksm), 0);
		for (i = 1; i < 16 && ksm[i] == ksm[0]; i++)
			;
		if (i == 16 && ksm[0])
			break;
		ck_assert_msg(now() < end, "KSM merged %d of 16 pages in 30 s",
			      i);
		usleep(20000);
	}

	stats(&s0);
	ck_assert_int_eq(libgpin_pin(g, a, 8, _i, 0, pa, &ha, NULL), 0);
	ck_assert_int_eq(libgpin_pin(g, b, 8, _i, GPIN_PIN_WRITE, pb, &hb, NULL),
			 0);
	stats(&s1);
	if (_i == GPIN_MODE_FAST)
		ck_assert_int_ge(DELTA(&s0, &s1, GPIN_MODE_FAST, fallbacks), 2);
	assert_mapped(pm, a, 8, pa, "after a read-only pin", _i);
	assert_mapped(pm, b, 8, pb, "after a write pin", _i);
	/*
	 * Not the KSM page: before the pins, all 16 pages were one frame;
	 * pinned, they are 16 frames, each the one mapped (above).  Neither
	 * the KSM frame (NUMA balancing may have moved it, and the frame be
	 * reused by a copy) nor /proc/kpageflags' KSM bit (6.12 sets it on
	 * every anonymous page: it tests mapping & PAGE_MAPPING_KSM, two
	 * bits) tells it reliably.
	 */
	for (i = 0; i < 16; i++) {
		uint64_t pi = i < 8 ? pa[i] : pb[i - 8];
		int j;

		for (j = 0; j < i; j++)
			ck_assert_msg(pi != (j < 8 ? pa[j] : pb[j - 8]),
				      "%s: pages %d and %d pinned on one frame "
				      "%#llx (the KSM page)", libgpin_mode_name(_i),
				      j, i, (unsigned long long)pi);
	}
	for (i = 0; i < 8; i++)
		ck_assert_int_eq(a[i * PAGE + 7], 0x3c);
	/* two full scans: ksmd would merge unpinned identical pages again */
	ck_assert_msg(ksm_wait_scans(2, 30), "ksmd did not scan");
	assert_mapped(pm, a, 8, pa, "after ksmd scanned", _i);
	assert_mapped(pm, b, 8, pb, "after ksmd scanned", _i);
	b[5] = 0x11;
	assert_mapped(pm, b, 8, pb, "after a write", _i);
	ck_assert_int_eq(libgpin_unpin(g, ha), 0);
	ck_assert_int_eq(libgpin_unpin(g, hb), 0);
	knob_write(KSM_DIR "run", "2");		/* unmerge what is left */
	close(pm);
	munmap(a, 16 * PAGE);
}
END_TEST

/* ---- 1 GiB hugetlb ------------------------------------------------------ */

/*
 * A 1 GiB hugetlb page, reserved at boot (hugepagesz=1G hugepages=1):
 * the fast walk takes it from pud leaves, without falling back; every
 * mode returns 2^18 consecutive frames, the ones pagemap shows; a pin
 * across its middle too.
 */
START_TEST(test_hugetlb_1g)
{
	const char *free_path = "/sys/kernel/mm/hugepages/"
				"hugepages-1048576kB/free_hugepages";
	size_t n = GPAGE / PAGE, i;
	uint64_t *pfns = calloc(n, sizeof(*pfns));
	uint64_t *map = calloc(n, sizeof(*map));
	int pm = open("/proc/self/pagemap", O_RDONLY);
	struct gpin_stats s0, s1;
	char *p;
	uint32_t h;

	ck_assert(pfns && map && pm >= 0);
	if (knob_ulong(free_path) < 1) {
		fprintf(stderr, "# SKIP: no free 1 GiB huge page (boot with "
			"hugepagesz=1G hugepages=1)\n");
		return;
	}
	p = mmap(NULL, GPAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_1GB_,
		 -1, 0);
	ck_assert_msg(p != MAP_FAILED, "mmap 1G: %s", strerror(errno));
	p[0] = 1;
	p[GPAGE - 1] = 2;

	stats(&s0);
	ck_assert_msg(!libgpin_pin(g, p, n, _i, GPIN_PIN_WRITE, pfns, &h, NULL),
		      "%s: pin 1 GiB: %s", libgpin_mode_name(_i), strerror(errno));
	stats(&s1);
	ck_assert_int_eq(pagemap_pfns(pm, p, n, map), 0);
	for (i = 0; i < n; i++) {
		ck_assert_msg(pfns[i] == pfns[0] + i && pfns[i] == map[i],
			      "%s: page %zu: pinned %#llx, first %#llx, "
			      "pagemap %#llx", libgpin_mode_name(_i), i,
			      (unsigned long long)pfns[i],
			      (unsigned long long)pfns[0],
			      (unsigned long long)map[i]);
	}
	ck_assert_uint_eq(DELTA(&s0, &s1, _i, pages), n);
	ck_assert_int_ge(DELTA(&s0, &s1, _i, huge_leaves), 1);
	if (_i == GPIN_MODE_FAST) {
		ck_assert_int_eq(DELTA(&s0, &s1, _i, fallbacks), 0);
		ck_assert_uint_eq(DELTA(&s0, &s1, _i, fast_pages), n);
	}
	ck_assert_int_eq(libgpin_unpin(g, h), 0);

	/* 32 pages across the middle, read-only */
	ck_assert_int_eq(libgpin_pin(g, p + GPAGE / 2 - 16 * PAGE, 32, _i, 0,
				  pfns, &h, NULL), 0);
	for (i = 0; i < 32; i++)
		ck_assert_uint_eq(pfns[i], map[n / 2 - 16 + i]);
	ck_assert_int_eq(libgpin_unpin(g, h), 0);
	ck_assert_int_eq(p[GPAGE - 1], 2);
	munmap(p, GPAGE);
	close(pm);
	free(pfns);
	free(map);
}
END_TEST

/* ---- mTHP (6.8+) -------------------------------------------------------- */

/*
 * 64 KiB anonymous folios (order 4), mapped by ptes: a large folio whose
 * pins are counted in _pincount, not the bias, taken by the fast walk
 * from ptes.  Pins that start and end inside folios, in every mode: the
 * frames are pagemap's, the fast walk does not fall back, the locked and
 * kernel modes see runs of one large folio; held across fork, the pins
 * keep the parent's pages (fork copies a pinned large folio's pages for
 * the child, by _pincount).
 */
START_TEST(test_mthp)
{
	int pm = open("/proc/self/pagemap", O_RDONLY);
	size_t len = 16 * 16 * PAGE;
	uint64_t pfns[40];
	struct gpin_stats s0, s1;
	int status;
	char *p;
	uint32_t h;
	pid_t pid;

	if (access(THP_DIR "hugepages-64kB/enabled", W_OK)) {
		fprintf(stderr, "# SKIP: no mTHP (kernel before 6.8)\n");
		return;
	}
	ck_assert_int_eq(knob_write(THP_DIR "hugepages-2048kB/enabled",
				    "never"), 0);
	ck_assert_int_eq(knob_write(THP_DIR "hugepages-64kB/enabled",
				    "always"), 0);
	p = map_aligned(len, HPAGE);
	touch(p, len, 5);
	ck_assert_int_eq(pagemap_pfns(pm, p, 2, pfns), 0);
	if (!(kpageflags(pfns[0]) & (1ULL << KPF_COMPOUND_HEAD)) ||
	    !(kpageflags(pfns[1]) & (1ULL << KPF_COMPOUND_TAIL))) {
		fprintf(stderr, "# SKIP: no 64 KiB folio was allocated\n");
		return;
	}

	/* pages 3..42: from inside the first folio to inside the third */
	stats(&s0);
	ck_assert_int_eq(libgpin_pin(g, p + 3 * PAGE, 40, _i, GPIN_PIN_WRITE,
				  pfns, &h, NULL), 0);
	stats(&s1);
	assert_mapped(pm, p + 3 * PAGE, 40, pfns, "after the pin", _i);
	if (_i == GPIN_MODE_FAST)
		ck_assert_int_eq(DELTA(&s0, &s1, _i, fallbacks), 0);
	else
		ck_assert_int_ge(DELTA(&s0, &s1, _i, huge_leaves), 3);

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		memset(p, 0x77, len);	/* the child's own copies */
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	memset(p, 0x33, len);
	assert_mapped(pm, p + 3 * PAGE, 40, pfns, "after fork and a write",
		      _i);
	ck_assert_int_eq(libgpin_unpin(g, h), 0);
	close(pm);
	munmap(p, len);
	/* for the cases after this one (knobs_restore() on failure) */
	knobs_restore();
}
END_TEST

/* ---- the per-folio reference limit -------------------------------------- */

/*
 * Pins of @n pages at @p in @mode, until one fails (at most @max); returns
 * how many succeeded, their handles in @h, the failure's errno in @err.
 */
static int pin_until_refused(char *p, uint64_t n, int mode, uint32_t *h,
			     int max, int *err)
{
	int k;

	*err = 0;
	for (k = 0; k < max; k++) {
		if (libgpin_pin(g, p, n, mode, GPIN_PIN_WRITE, NULL, &h[k],
			     NULL)) {
			*err = errno;
			break;
		}
	}
	return k;
}

static void unpin_all(uint32_t *h, int n)
{
	while (n--)
		ck_assert_int_eq(libgpin_unpin(g, h[n]), 0);
}

/*
 * One small page pinned again and again: each pin adds
 * GUP_PIN_COUNTING_BIAS (1024) to its count; with folio_ref_limit at
 * 8 * 1024 + 512 the ninth pin would take it past the limit and is
 * refused with ENOMEM in every mode (fast: before anything is added;
 * locked and kernel: after pin_user_pages*(), undone), leaving nothing
 * pinned; an unpin makes room for one more.  A THP takes one reference per
 * page: at 4 * 512 + 256, four pins of its 512 pages fit, not five.  The
 * parameter refuses values outside 2048 .. 3 << 29.
 */
START_TEST(test_folio_ref_limit)
{
	char *p = map_aligned(HPAGE, HPAGE);
	struct gpin_stats s0, s1;
	int k, err, again = -1, err2, thp_k = -1, thp_err = 0;
	char deflt[32];
	uint32_t h[20];

	ck_assert_int_eq(knob_read(REF_LIMIT, deflt, sizeof(deflt)), 0);
	ck_assert_str_eq(deflt, "1610612736");
	ck_assert_int_eq(knob_write(REF_LIMIT, "2047"), -EINVAL);
	ck_assert_int_eq(knob_write(REF_LIMIT, "1610612737"), -EINVAL);

	madvise(p, HPAGE, MADV_NOHUGEPAGE);
	touch(p, PAGE, 9);
	stats(&s0);
	ck_assert_int_eq(knob_write(REF_LIMIT, "8704"), 0);
	k = pin_until_refused(p, 1, _i, h, 20, &err);
	stats(&s1);
	if (k == 8 && err == ENOMEM) {
		unpin_all(h + 7, 1);
		again = pin_until_refused(p, 1, _i, h + 7, 1, &err2);
	}
	/* the limit back before any assertion can end the test */
	knob_write(REF_LIMIT, deflt);
	ck_assert_msg(k == 8 && err == ENOMEM, "%s: %d pins, then %s",
		      libgpin_mode_name(_i), k, strerror(err));
	ck_assert_msg(again == 1, "%s: no pin after an unpin: %s",
		      libgpin_mode_name(_i), strerror(err2));
	ck_assert_int_eq(DELTA(&s0, &s1, _i, live_pages), 8);
	ck_assert_int_ge(DELTA(&s0, &s1, _i, failures), 1);
	unpin_all(h, 8);
	munmap(p, HPAGE);

	p = map_aligned(HPAGE, HPAGE);
	if (!madvise(p, HPAGE, MADV_HUGEPAGE)) {
		uint64_t f;

		touch(p, HPAGE, 10);
		f = kpageflags(pagemap_pfn(p));
		if (f & (1ULL << KPF_COMPOUND_HEAD) &&
		    !knob_write(REF_LIMIT, "2304")) {
			thp_k = pin_until_refused(p, HPAGE / PAGE, _i, h, 8,
						  &thp_err);
			knob_write(REF_LIMIT, deflt);
		}
	}
	if (thp_k < 0) {
		fprintf(stderr, "# no THP: the large-folio part skipped\n");
	} else {
		ck_assert_msg(thp_k == 4 && thp_err == ENOMEM,
			      "%s: THP: %d pins, then %s", libgpin_mode_name(_i),
			      thp_k, strerror(thp_err));
		unpin_all(h, thp_k);
	}
	munmap(p, HPAGE);
}
END_TEST

void mm_add_tcases(Suite *s)
{
	TCase *tc = tcase_create("mm");

	tcase_add_unchecked_fixture(tc, knobs_save, knobs_restore);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_pageout_race, 0, GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_migrate_race, 0, GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_migrate_pinned, 0, GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_ksm, 0, GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_hugetlb_1g, 0, GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_mthp, 0, GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_folio_ref_limit, 0, GPIN_MODE_COUNT);
	suite_add_tcase(s, tc);
}
