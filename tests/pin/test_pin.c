// SPDX-License-Identifier: GPL-2.0
/*
 * gpin.ko tests, run as root in the test host with gpin.ko loaded
 * (tests/pin/run-in-rig.sh).  Exit 77 when /dev/gpin is absent.
 *
 * Every test checks in its teardown that the module's live-pinned-pages
 * counter is back to zero once the test's file is closed.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libgpin.h"
#include "test_pin.h"

#define NPAGES		64

struct libgpin *g;

/* ---- helpers ---------------------------------------------------------- */

void *map_anon(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ck_assert_msg(p != MAP_FAILED, "mmap: %s", strerror(errno));
	return p;
}

/* A 2M-aligned anonymous region of @len bytes. */
void *map_aligned(size_t len, size_t align)
{
	char *p = map_anon(len + align, PROT_READ | PROT_WRITE);
	char *a = (char *)(((uintptr_t)p + align - 1) & ~(align - 1));

	if (a > p)
		munmap(p, a - p);
	munmap(a + len, p + align - a);
	return a;
}

void touch(void *p, size_t len, int seed)
{
	size_t off;

	for (off = 0; off < len; off += PAGE)
		((volatile char *)p)[off] = (char)(seed + off / PAGE);
}

/* PFN of @addr from /proc/self/pagemap, 0 when not present. */
uint64_t pagemap_pfn(const void *addr)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &e, sizeof(e),
			       (uintptr_t)addr / PAGE * sizeof(e)), sizeof(e));
	close(fd);
	if (!(e & (1ULL << 63)))
		return 0;
	return e & ((1ULL << 55) - 1);
}

/*
 * PFNs of the @n pages from @addr, 0 where not present, with one read of
 * /proc/self/pagemap (@fd).  Returns 0, or -1 when the read failed.  No
 * assertion: threads call it.
 */
int pagemap_pfns(int fd, const void *addr, size_t n, uint64_t *out)
{
	ssize_t want = n * sizeof(*out);
	size_t i;

	if (pread(fd, out, want, (uintptr_t)addr / PAGE * sizeof(*out)) != want)
		return -1;
	for (i = 0; i < n; i++)
		out[i] = out[i] & (1ULL << 63) ? out[i] & ((1ULL << 55) - 1) : 0;
	return 0;
}

static void check_pfns(const void *start, size_t npages, const uint64_t *pfns)
{
	size_t i;

	for (i = 0; i < npages; i++) {
		uint64_t want = pagemap_pfn((const char *)start + i * PAGE);

		ck_assert_msg(want != 0, "page %zu not present", i);
		ck_assert_msg(pfns[i] == want,
			      "page %zu: pinned pfn %#llx, pagemap %#llx", i,
			      (unsigned long long)pfns[i],
			      (unsigned long long)want);
	}
}

void stats(struct gpin_stats *st)
{
	ck_assert_msg(!libgpin_stats(g, st), "stats: %s", strerror(errno));
}

static int pin(void *start, uint64_t npages, int mode, unsigned int flags,
	       uint64_t *pfns, uint32_t *handle)
{
	return libgpin_pin(g, start, npages, mode, flags, pfns, handle, NULL) ?
	       -errno : 0;
}

void setup(void)
{
	g = libgpin_open();
	ck_assert_msg(g, "gpin_open: %s", libgpin_strerror(errno));
}

/*
 * Closing a file does not wait for its I/O in flight: those pages are
 * released when the I/O completes.  Polls a file of its own.
 */
unsigned long long wait_unpinned(void)
{
	struct gpin_stats st;
	struct libgpin *g2 = libgpin_open();
	int i;

	ck_assert(g2);
	for (i = 0; i < 400; i++) {
		ck_assert(!libgpin_stats(g2, &st));
		if (!st.live_pages)
			break;
		usleep(50000);
	}
	libgpin_close(g2);
	return st.live_pages;
}

/*
 * NR_FOLL_PIN_ACQUIRED minus NR_FOLL_PIN_RELEASED of /proc/vmstat: the
 * pins held system-wide, or -1 when they cannot be read exactly.  Each CPU
 * keeps a share of a vmstat counter that reaches the global one only past
 * a threshold, so every share is folded in first (vm.stat_refresh, root).
 * The rig's test host runs nothing else that pins while a test runs (a
 * busybox init, output on the console; on 6.12 the block layer's O_DIRECT
 * and 9p's uncached I/O would pin, and nothing issues them), so a test
 * sees its own pins exactly.
 */
long long pins_held(void)
{
	long long v, acquired = -1, released = -1;
	char name[64];
	FILE *f;
	int fd;

	fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);
	if (fd < 0)
		return -1;
	if (write(fd, "1", 1) != 1) {
		close(fd);
		return -1;
	}
	close(fd);
	f = fopen("/proc/vmstat", "r");
	ck_assert_ptr_nonnull(f);
	while (fscanf(f, "%63s %lld", name, &v) == 2) {
		if (!strcmp(name, "nr_foll_pin_acquired"))
			acquired = v;
		else if (!strcmp(name, "nr_foll_pin_released"))
			released = v;
	}
	fclose(f);
	ck_assert_msg(acquired >= 0 && released >= 0,
		      "no nr_foll_pin_* in /proc/vmstat");
	return acquired - released;
}

/* VmPin of /proc/self/status, in KiB: the process's pinned_vm. */
long vm_pin_kib(void)
{
	char line[128];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kib) == 1)
			break;
	fclose(f);
	ck_assert_msg(kib >= 0, "no VmPin in /proc/self/status");
	return kib;
}

/*
 * The system-wide count moves for a moment when anything pins (a reaped
 * child's exit, the kernel's own direct I/O): a comparison waits up to
 * 2 s for it to come to @want.  A pin released once too often, or never,
 * stays off: it still shows.  Returns the last reading.
 */
long long pins_settle(long long want)
{
	long long v = pins_held();
	int i;

	for (i = 0; i < 100 && v >= 0 && v != want; i++) {
		usleep(20000);
		v = pins_held();
	}
	return v;
}

/* A baseline: two readings 50 ms apart that agree (1 s at most). */
long long pins_steady(void)
{
	long long v = pins_held(), w;
	int i;

	for (i = 0; i < 20 && v >= 0; i++) {
		usleep(50000);
		w = pins_held();
		if (w == v)
			break;
		v = w;
	}
	return v;
}

/*
 * Whether none of the @n pages at @buf is pinned any more, asked of the
 * kernel itself: fork() copies a page for the child when
 * page_maybe_dma_pinned() says it may be pinned (its reference count is
 * GUP_PIN_COUNTING_BIAS or more) and shares it copy-on-write otherwise.
 * So a child that sees every page at the parent's PFN shares them all: no
 * pin is left (a leaked one keeps the count that high).  The pages must be
 * present, anonymous and not written meanwhile.
 */
bool pages_unpinned(const void *buf, size_t n)
{
	uint64_t *mine = calloc(n, sizeof(*mine));
	uint64_t *child = calloc(n, sizeof(*child));
	int pfd[2], fd, status;
	size_t got = 0, i;
	bool same = true;
	pid_t pid;

	ck_assert(mine && child);
	fd = open("/proc/self/pagemap", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pagemap_pfns(fd, buf, n, mine), 0);
	close(fd);
	ck_assert_int_eq(pipe(pfd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		fd = open("/proc/self/pagemap", O_RDONLY);
		if (fd < 0 || pagemap_pfns(fd, buf, n, child))
			_exit(1);
		_exit(write(pfd[1], child, n * sizeof(*child)) !=
		      (ssize_t)(n * sizeof(*child)));
	}
	close(pfd[1]);
	while (got < n * sizeof(*child)) {
		ssize_t r = read(pfd[0], (char *)child + got,
				 n * sizeof(*child) - got);

		if (r <= 0)
			break;
		got += r;
	}
	close(pfd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && !WEXITSTATUS(status) &&
		      got == n * sizeof(*child), "pagemap of the child");
	for (i = 0; i < n; i++) {
		ck_assert_msg(mine[i], "page %zu not present", i);
		if (mine[i] != child[i]) {
			fprintf(stderr, "# page %zu copied at fork: pinned\n",
				i);
			same = false;
		}
	}
	free(mine);
	free(child);
	return same;
}

/* The live counter must be back to zero once our file is closed. */
void teardown(void)
{
	unsigned long long left;

	libgpin_close(g);
	g = NULL;
	left = wait_unpinned();
	ck_assert_msg(left == 0, "%llu pages still pinned", left);
}

/* ---- correctness: PFNs equal pagemap's ----------------------------------- */

START_TEST(test_pfns_4k)
{
	uint64_t pfns[NPAGES];
	struct gpin_stats a, b;
	uint32_t h;
	char *p = map_anon(NPAGES * PAGE, PROT_READ | PROT_WRITE);

	madvise(p, NPAGES * PAGE, MADV_NOHUGEPAGE);
	touch(p, NPAGES * PAGE, 1);
	stats(&a);
	ck_assert_int_eq(pin(p, NPAGES, _i, GPIN_PIN_WRITE, pfns, &h), 0);
	stats(&b);
	check_pfns(p, NPAGES, pfns);
	ck_assert_int_eq(DELTA(&a, &b, _i, calls), 1);
	ck_assert_int_eq(DELTA(&a, &b, _i, pages), NPAGES);
	ck_assert_int_eq(DELTA(&a, &b, _i, live_pages), NPAGES);
	if (_i == GPIN_MODE_FAST) {
		ck_assert_int_eq(DELTA(&a, &b, _i, fast_pages), NPAGES);
		ck_assert_int_eq(DELTA(&a, &b, _i, fallbacks), 0);
	}
	ck_assert_int_eq(libgpin_unpin(g, h), 0);
	stats(&a);
	ck_assert_int_eq(DELTA(&b, &a, _i, live_pages), -NPAGES);
	munmap(p, NPAGES * PAGE);
}
END_TEST

static int thp_enabled(void)
{
	char buf[128] = "";
	int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY);

	if (fd < 0)
		return 0;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = 0;
	close(fd);
	return !strstr(buf, "[never]");
}

START_TEST(test_pfns_thp)
{
	size_t n = 2 * HPAGE / PAGE, i;
	uint64_t *pfns = calloc(n, sizeof(*pfns));
	struct gpin_stats a, b;
	uint32_t h;
	char *p;

	if (!thp_enabled()) {
		fprintf(stderr, "# SKIP thp: transparent hugepages disabled\n");
		return;
	}
	p = map_aligned(2 * HPAGE, HPAGE);
	ck_assert_int_eq(madvise(p, 2 * HPAGE, MADV_HUGEPAGE), 0);
	touch(p, 2 * HPAGE, 7);
	stats(&a);
	ck_assert_int_eq(pin(p, n, _i, GPIN_PIN_WRITE, pfns, &h), 0);
	stats(&b);
	check_pfns(p, n, pfns);
	/* a THP is physically contiguous */
	for (i = 1; i < n / 2; i++)
		if (pfns[i] != pfns[0] + i)
			break;
	if (i < n / 2) {
		fprintf(stderr, "# thp: range not backed by a THP, huge path not exercised\n");
	} else {
		ck_assert_int_ge(DELTA(&a, &b, _i, huge_leaves), 1);
		if (_i == GPIN_MODE_FAST)
			ck_assert_int_eq(DELTA(&a, &b, _i, fast_pages), n);
	}
	ck_assert_int_eq(libgpin_unpin(g, h), 0);
	munmap(p, 2 * HPAGE);
	free(pfns);
}
END_TEST

static int reserve_hugetlb(void)
{
	int fd = open("/proc/sys/vm/nr_hugepages", O_RDWR);
	char buf[32] = "";

	if (fd < 0)
		return 0;
	if (write(fd, "8", 1) < 0) {
		close(fd);
		return 0;
	}
	if (pread(fd, buf, sizeof(buf) - 1, 0) < 0)
		buf[0] = 0;
	close(fd);
	return atoi(buf);
}

START_TEST(test_pfns_hugetlb)
{
	size_t n = HPAGE / PAGE;
	uint64_t *pfns = calloc(n, sizeof(*pfns));
	struct gpin_stats a, b;
	uint32_t h;
	char *p;

	if (reserve_hugetlb() < 1) {
		fprintf(stderr, "# SKIP hugetlb: no huge pages could be reserved\n");
		return;
	}
	p = mmap(NULL, HPAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "# SKIP hugetlb: mmap: %s\n", strerror(errno));
		return;
	}
	touch(p, HPAGE, 3);
	stats(&a);
	ck_assert_int_eq(pin(p, n, _i, GPIN_PIN_WRITE, pfns, &h), 0);
	stats(&b);
	check_pfns(p, n, pfns);
	ck_assert_int_eq(DELTA(&a, &b, _i, pages), n);
	ck_assert_int_eq(libgpin_unpin(g, h), 0);
	munmap(p, HPAGE);
	free(pfns);
}
END_TEST

/*
 * Data written through the pinned page is seen: a write pin of a page
 * shared copy-on-write with a child must break COW at pin time, so the page
 * the module holds is the one the parent keeps writing to and reading.
 */
START_TEST(test_data_cow)
{
	uint64_t pfns[4];
	uint32_t h;
	char *p = map_anon(4 * PAGE, PROT_READ | PROT_WRITE);
	int i, status;
	pid_t pid;

	touch(p, 4 * PAGE, 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		sleep(2);
		_exit(p[0] == 0 ? 0 : 1);
	}
	/* COW-shared now: the fast walk cannot write-pin, locked breaks COW */
	ck_assert_int_eq(pin(p, 4, _i, GPIN_PIN_WRITE, pfns, &h), 0);
	for (i = 0; i < 4; i++) {
		memset(p + i * PAGE, 0x5a + i, PAGE);
		ck_assert_uint_eq(pagemap_pfn(p + i * PAGE), pfns[i]);
		ck_assert_int_eq(p[i * PAGE + 100], 0x5a + i);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_int_eq(libgpin_unpin(g, h), 0);
	munmap(p, 4 * PAGE);
}
END_TEST

/* ---- fallback matrix ------------------------------------------------------ */

START_TEST(test_fb_not_faulted)
{
	uint64_t pfns[NPAGES];
	struct gpin_stats a, b;
	uint32_t h;
	char *p = map_anon(NPAGES * PAGE, PROT_READ | PROT_WRITE);

	madvise(p, NPAGES * PAGE, MADV_NOHUGEPAGE);
	touch(p, NPAGES / 2 * PAGE, 1);		/* first half only */
	stats(&a);
	ck_assert_int_eq(pin(p, NPAGES, GPIN_MODE_FAST, GPIN_PIN_WRITE, pfns,
			     &h), 0);
	stats(&b);
	ck_assert_int_eq(DELTA(&a, &b, GPIN_MODE_FAST, fallbacks), 1);
	ck_assert_int_eq(DELTA(&a, &b, GPIN_MODE_FAST, fast_pages), NPAGES / 2);
	ck_assert_int_eq(DELTA(&a, &b, GPIN_MODE_FAST, pages), NPAGES);
	check_pfns(p, NPAGES, pfns);
	ck_assert_int_eq(libgpin_unpin(g, h), 0);
	munmap(p, NPAGES * PAGE);
}
END_TEST

START_TEST(test_fb_prot_none)
{
	struct gpin_stats a, b;
	uint32_t h;
	char *p = map_anon(4 * PAGE, PROT_READ | PROT_WRITE);

	touch(p, 4 * PAGE, 1);
	ck_assert_int_eq(mprotect(p, 4 * PAGE, PROT_NONE), 0);
	stats(&a);
	ck_assert_int_eq(pin(p, 4, _i, 0, NULL, &h), -EFAULT);
	stats(&b);
	ck_assert_int_eq(DELTA(&a, &b, _i, failures), 1);
	ck_assert_int_eq(DELTA(&a, &b, _i, live_pages), 0);
	if (_i == GPIN_MODE_FAST)
		ck_assert_int_eq(DELTA(&a, &b, _i, fallbacks), 1);
	munmap(p, 4 * PAGE);
}
END_TEST

START_TEST(test_fb_readonly_write)
{
	struct gpin_stats a, b;
	uint32_t h;
	char *p = map_anon(4 * PAGE, PROT_READ | PROT_WRITE);

	touch(p, 4 * PAGE, 1);
	ck_assert_int_eq(mprotect(p, 4 * PAGE, PROT_READ), 0);
	stats(&a);
	ck_assert_int_eq(pin(p, 4, _i, GPIN_PIN_WRITE, NULL, &h), -EFAULT);
	stats(&b);
	ck_assert_int_eq(DELTA(&a, &b, _i, live_pages), 0);
	if (_i == GPIN_MODE_FAST)
		ck_assert_int_eq(DELTA(&a, &b, _i, fallbacks), 1);
	/* reading is fine, and fast: the ptes are present and anonymous */
	ck_assert_int_eq(pin(p, 4, _i, 0, NULL, &h), 0);
	ck_assert_int_eq(libgpin_unpin(g, h), 0);
	munmap(p, 4 * PAGE);
}
END_TEST

/*
 * Whether this kernel refuses long-term write pins of shared file-backed
 * mappings (PIN handles are FOLL_LONGTERM): Linux 6.5 began refusing them
 * for filesystems that need dirty tracking, since writeback could run
 * under the pin.  shmem is exempt.
 */
static bool kernel_refuses_longterm_file_write(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	ck_assert_int_eq(uname(&u), 0);
	ck_assert_int_eq(sscanf(u.release, "%d.%d", &major, &minor), 2);
	return major > 6 || (major == 6 && minor >= 5);
}

/*
 * A MAP_SHARED mapping of @fd: not anonymous, so the walk stops at once
 * and the locked path serves (or refuses, as the kernel does, a long-term
 * write pin of a file when @write_refused).
 */
static void fb_shared(int fd, const char *what, bool write_refused)
{
	unsigned int flags = write_refused ? 0 : GPIN_PIN_WRITE;
	uint64_t pfns[8];
	struct gpin_stats a, b;
	uint32_t h;
	char *p;

	ck_assert_int_eq(ftruncate(fd, 8 * PAGE), 0);
	p = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_msg(p != MAP_FAILED, "%s mmap: %s", what, strerror(errno));
	touch(p, 8 * PAGE, 9);
	if (write_refused) {
		stats(&a);
		ck_assert_int_eq(pin(p, 8, GPIN_MODE_FAST, GPIN_PIN_WRITE,
				     pfns, &h), -EFAULT);
		stats(&b);
		ck_assert_int_eq(DELTA(&a, &b, GPIN_MODE_FAST, fallbacks), 1);
		ck_assert_int_eq(b.live_pages, a.live_pages);
	}
	stats(&a);
	ck_assert_int_eq(pin(p, 8, GPIN_MODE_FAST, flags, pfns, &h), 0);
	stats(&b);
	ck_assert_int_eq(DELTA(&a, &b, GPIN_MODE_FAST, fallbacks), 1);
	ck_assert_int_eq(DELTA(&a, &b, GPIN_MODE_FAST, fast_pages), 0);
	ck_assert_int_eq(DELTA(&a, &b, GPIN_MODE_FAST, pages), 8);
	check_pfns(p, 8, pfns);
	ck_assert_int_eq(libgpin_unpin(g, h), 0);
	munmap(p, 8 * PAGE);
}

START_TEST(test_fb_shmem)
{
	int fd = memfd_create("gpin-test", 0);

	ck_assert_int_ge(fd, 0);
	fb_shared(fd, "shmem", false);
	close(fd);
}
END_TEST

START_TEST(test_fb_file)
{
	const char *dir = getenv("GPIN_TEST_FILEDIR");
	char path[PATH_MAX];
	int fd;

	if (!dir)
		dir = "/tmp";
	snprintf(path, sizeof(path), "%s/gpin-test.XXXXXX", dir);
	fd = mkstemp(path);
	ck_assert_msg(fd >= 0, "mkstemp %s: %s", path, strerror(errno));
	unlink(path);
	/* /tmp is tmpfs (shmem) in the test host: exempt */
	fb_shared(fd, "file", strcmp(dir, "/tmp") &&
		  kernel_refuses_longterm_file_write());
	close(fd);
}
END_TEST

START_TEST(test_fb_special)
{
	struct gpin_stats a, b;
	uint32_t h;
	char *p;

	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, libgpin_fd(g), 0);
	ck_assert_msg(p != MAP_FAILED, "mmap /dev/gpin: %s", strerror(errno));
	p[0] = 1;
	stats(&a);
	ck_assert_int_eq(pin(p, 1, _i, 0, NULL, &h), -EFAULT);
	ck_assert_int_eq(pin(p, 1, _i, GPIN_PIN_WRITE, NULL, &h), -EFAULT);
	stats(&b);
	ck_assert_int_eq(DELTA(&a, &b, _i, failures), 2);
	ck_assert_int_eq(DELTA(&a, &b, _i, live_pages), 0);
	if (_i == GPIN_MODE_FAST)
		ck_assert_int_eq(DELTA(&a, &b, _i, fallbacks), 2);
	munmap(p, PAGE);
	/* private or larger mappings of the device are refused */
	p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, libgpin_fd(g), 0);
	ck_assert(p == MAP_FAILED);
	p = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, libgpin_fd(g), 0);
	ck_assert(p == MAP_FAILED);
}
END_TEST

START_TEST(test_fb_two_vmas)
{
	uint64_t pfns[16];
	struct gpin_stats a, b;
	uint32_t h;
	char *p = map_anon(16 * PAGE, PROT_READ | PROT_WRITE);

	madvise(p, 16 * PAGE, MADV_NOHUGEPAGE);
	touch(p, 16 * PAGE, 2);
	/* same protections, different flags: two VMAs */
	ck_assert_int_eq(madvise(p + 8 * PAGE, 8 * PAGE, MADV_DONTFORK), 0);
	stats(&a);
	ck_assert_int_eq(pin(p, 16, _i, GPIN_PIN_WRITE, pfns, &h), 0);
	stats(&b);
	check_pfns(p, 16, pfns);
	if (_i == GPIN_MODE_FAST) {
		/* the walk does not care about VMAs */
		ck_assert_int_eq(DELTA(&a, &b, _i, fast_pages), 16);
		ck_assert_int_eq(DELTA(&a, &b, _i, fallbacks), 0);
	}
	ck_assert_int_eq(libgpin_unpin(g, h), 0);
	munmap(p, 16 * PAGE);
}
END_TEST

START_TEST(test_fb_hole)
{
	struct gpin_stats a, b;
	uint32_t h;
	char *p = map_anon(16 * PAGE, PROT_READ | PROT_WRITE);

	touch(p, 16 * PAGE, 2);
	ck_assert_int_eq(munmap(p + 8 * PAGE, 8 * PAGE), 0);
	stats(&a);
	ck_assert_int_eq(pin(p, 16, _i, GPIN_PIN_WRITE, NULL, &h), -EFAULT);
	stats(&b);
	ck_assert_int_eq(DELTA(&a, &b, _i, live_pages), 0);
	ck_assert_int_eq(DELTA(&a, &b, _i, failures), 1);
	if (_i == GPIN_MODE_FAST) {
		ck_assert_int_eq(DELTA(&a, &b, _i, fallbacks), 1);
		ck_assert_int_eq(DELTA(&a, &b, _i, fast_pages), 0);
	}
	munmap(p, 8 * PAGE);
}
END_TEST

/* ---- bad input ------------------------------------------------------------ */

static char *bad_buf;

static void bad_setup(void)
{
	setup();
	bad_buf = map_anon(4 * PAGE, PROT_READ | PROT_WRITE);
	touch(bad_buf, 4 * PAGE, 0);
}

static void bad_teardown(void)
{
	munmap(bad_buf, 4 * PAGE);
	teardown();
}

static const struct bad_pin {
	const char *what;
	uint32_t size, flags, mode;
	uint64_t start;		/* 0: bad_buf */
	uint64_t npages;
	uint64_t pfns;
	uint64_t reserved;
	int err;
} bad_pins[] = {
	{ "zero pages", 0, 0, 0, 0, 0, 0, 0, EINVAL },
	{ "over max", 0, 0, 0, 0, GPIN_MAX_PAGES_PER_PIN + 1ULL, 0, 0, E2BIG },
	{ "huge count", 0, 0, 0, 0, ~0ULL, 0, 0, E2BIG },
	{ "overflow", 0, 0, 0, ~0ULL & ~(PAGE - 1), 4, 0, 0, EOVERFLOW },
	{ "kernel address", 0, 0, 0, 0xffff888000000000ULL, 1, 0, 0, EFAULT },
	{ "end past user space", 0, 0, 0, 0x00007ffffffff000ULL, 2, 0, 0, EFAULT },
	{ "unaligned", 0, 0, 0, 1, 1, 0, 0, EINVAL },
	{ "unknown flag", 0, 1U << 7, 0, 0, 1, 0, 0, EINVAL },
	{ "unknown mode", 0, 0, GPIN_MODE_COUNT, 0, 1, 0, 0, EINVAL },
	{ "reserved", 0, 0, 0, 0, 1, 0, 1, EINVAL },
	{ "size too small", 8, 0, 0, 0, 1, 0, 0, EINVAL },
	{ "size huge", 0xffffffff, 0, 0, 0, 1, 0, 0, E2BIG },
	{ "pfns kernel ptr", 0, 0, 0, 0, 1, 0xffff888000000000ULL, 0, EFAULT },
};

START_TEST(test_bad_pin)
{
	const struct bad_pin *b = &bad_pins[_i];
	struct gpin_stats s0, s1;
	struct gpin_pin p = {
		.size = b->size ? b->size : sizeof(p),
		.flags = b->flags,
		.start = b->start ? b->start : (uintptr_t)bad_buf,
		.npages = b->npages,
		.pfns = b->pfns,
		.mode = b->mode,
		.reserved = { b->reserved },
	};

	stats(&s0);
	errno = 0;
	ck_assert_msg(ioctl(libgpin_fd(g), GPIN_IOC_PIN, &p) == -1,
		      "%s: accepted", b->what);
	ck_assert_msg(errno == b->err, "%s: errno %d (%s), want %d", b->what,
		      errno, strerror(errno), b->err);
	stats(&s1);
	ck_assert_uint_eq(s1.live_pages, s0.live_pages);
}
END_TEST

START_TEST(test_bad_sizes)
{
	struct gpin_pin zero = { .size = 0, .start = (uintptr_t)bad_buf,
				 .npages = 1 };
	struct {
		struct gpin_pin p;
		uint64_t tail;
	} big = { .p = { .size = sizeof(big), .start = (uintptr_t)bad_buf,
			 .npages = 1 } };
	struct gpin_unpin u = { .size = sizeof(u) };
	struct gpin_stats st = { .size = sizeof(st) };
	struct gpin_stats_reset r = { .size = sizeof(r) };

	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_PIN, &zero), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* larger than known with a zero tail: accepted */
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_PIN, &big), 0);
	ck_assert_uint_ne(big.p.handle, 0);
	u.handle = big.p.handle;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_UNPIN, &u), 0);
	/* non-zero tail */
	big.tail = 1;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_PIN, &big), -1);
	ck_assert_int_eq(errno, E2BIG);

	u.size = 4;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_UNPIN, &u), -1);
	ck_assert_int_eq(errno, EINVAL);
	u.size = sizeof(u);
	u.flags = 1;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_UNPIN, &u), -1);
	ck_assert_int_eq(errno, EINVAL);
	u.flags = 0;
	u.reserved = 1;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_UNPIN, &u), -1);
	ck_assert_int_eq(errno, EINVAL);

	st.size = 8;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_STATS, &st), -1);
	ck_assert_int_eq(errno, EINVAL);
	st.size = sizeof(st);
	st.flags = GPIN_STATS_FLAGS_ALL + 1;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_STATS, &st), -1);
	ck_assert_int_eq(errno, EINVAL);
	st.flags = 0;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_STATS, &st), 0);
	ck_assert_uint_eq(st.size, sizeof(st));
	ck_assert_uint_eq(st.nr_modes, GPIN_MODE_COUNT);
	ck_assert_uint_eq(st.max_pages_per_pin, GPIN_MAX_PAGES_PER_PIN);

	r.flags = GPIN_STATS_FLAGS_ALL + 1;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_STATS_RESET, &r), -1);
	ck_assert_int_eq(errno, EINVAL);
	r.flags = 0;
	r.size = 4;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_STATS_RESET, &r), -1);
	ck_assert_int_eq(errno, EINVAL);

	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_PIN, NULL), -1);
	ck_assert_int_eq(errno, EFAULT);
	ck_assert_int_eq(ioctl(libgpin_fd(g), _IO(GPIN_IOC_TYPE, 0x7f), &u), -1);
	ck_assert_int_eq(errno, ENOTTY);
	ck_assert_int_eq(ioctl(libgpin_fd(g), _IOWR('T', 1, int), &u), -1);
	ck_assert_int_eq(errno, ENOTTY);
}
END_TEST

/*
 * Command numbers: type 0xBC, each with its direction and struct, taken
 * exactly.  The numbers gpin.ko once used (type 0xB7, nsfs's: UNPIN, STATS
 * and STATS_RESET were NS_GET_USERNS, _PARENT and _NSTYPE bit for bit), a
 * command with the wrong direction and one with other size bits (which
 * would sidestep a seccomp rule on the command) are -ENOTTY.
 */
START_TEST(test_ioctl_numbers)
{
	static const unsigned int old_nrs[] = {
		0x00, 0x01, 0x02, 0x03, 0x10, 0x11, 0x12, 0x13,
	};
	struct {
		struct gpin_stats st;
		uint8_t tail[64];
	} big = { .st = { .size = sizeof(big) } };
	struct gpin_unpin u = { .size = sizeof(u) };
	unsigned int i;

	ck_assert_uint_eq(_IOC_TYPE(GPIN_IOC_PIN), 0xBC);
	ck_assert_uint_eq(_IOC_DIR(GPIN_IOC_PIN), _IOC_READ | _IOC_WRITE);
	ck_assert_uint_eq(_IOC_SIZE(GPIN_IOC_PIN), sizeof(struct gpin_pin));
	ck_assert_uint_eq(_IOC_DIR(GPIN_IOC_UNPIN), _IOC_WRITE);
	ck_assert_uint_eq(_IOC_DIR(GPIN_IOC_DIO_REAP), _IOC_READ | _IOC_WRITE);
	for (i = 0; i < sizeof(old_nrs) / sizeof(old_nrs[0]); i++) {
		errno = 0;
		ck_assert_int_eq(ioctl(libgpin_fd(g), _IO(0xB7, old_nrs[i]), &u),
				 -1);
		ck_assert_int_eq(errno, ENOTTY);
	}
	/* UNPIN's number and struct, read-write instead of write */
	ck_assert_int_eq(ioctl(libgpin_fd(g), _IOWR(GPIN_IOC_TYPE, 0x01,
						     struct gpin_unpin), &u), -1);
	ck_assert_int_eq(errno, ENOTTY);
	/* STATS with other size bits; its own size field grows the struct */
	ck_assert_int_eq(ioctl(libgpin_fd(g), _IOWR(GPIN_IOC_TYPE, 0x02,
						     big), &big), -1);
	ck_assert_int_eq(errno, ENOTTY);
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_STATS, &big), 0);
	ck_assert_uint_eq(big.st.nr_modes, GPIN_MODE_COUNT);
	ck_assert_int_eq(ioctl(libgpin_fd(g), _IOC(_IOC_READ | _IOC_WRITE,
						    GPIN_IOC_TYPE, 0x40, 8), &u),
			 -1);
	ck_assert_int_eq(errno, ENOTTY);
}
END_TEST

START_TEST(test_bad_handles)
{
	uint32_t h;

	ck_assert_int_eq(libgpin_unpin(g, 0), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(libgpin_unpin(g, 12345), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(pin(bad_buf, 4, GPIN_MODE_FAST, 0, NULL, &h), 0);
	ck_assert_int_eq(libgpin_unpin(g, h), 0);
	ck_assert_int_eq(libgpin_unpin(g, h), -1);		/* double unpin */
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

/* PFN buffer that faults only after the pages are pinned: all released. */
START_TEST(test_bad_pfns_readonly)
{
	uint64_t *ro = map_anon(PAGE, PROT_READ);
	struct gpin_stats st;
	uint32_t h;

	ck_assert_int_eq(pin(bad_buf, 4, _i, GPIN_PIN_WRITE, ro, &h), -EFAULT);
	stats(&st);
	ck_assert_uint_eq(st.file_live_pages, 0);
	munmap(ro, PAGE);
}
END_TEST

static void param_path(char *path, size_t size, const char *name)
{
	snprintf(path, size, "/sys/module/gpin/parameters/%s", name);
}

unsigned long get_param(const char *name)
{
	char path[128];
	unsigned long value;
	FILE *f;

	param_path(path, sizeof(path), name);
	f = fopen(path, "r");
	ck_assert_msg(f, "%s: %s", path, strerror(errno));
	ck_assert_msg(fscanf(f, "%lu", &value) == 1, "%s: not a number", path);
	fclose(f);
	return value;
}

unsigned long set_param(const char *name, unsigned long value)
{
	unsigned long old = get_param(name);
	char path[128];
	FILE *f;

	param_path(path, sizeof(path), name);
	f = fopen(path, "w");
	ck_assert_msg(f, "%s: %s", path, strerror(errno));
	fprintf(f, "%lu\n", value);
	ck_assert_msg(fclose(f) == 0, "%s = %lu: %s", path, value,
		      strerror(errno));
	return old;
}

/*
 * Per-file cap: GPIN_MAX_PAGES_PER_FILE pages, then ENOSPC.  The module's
 * own cap (max_pins, by default the RAM's pages: less than a file's cap in
 * a small test host) is lifted for it.
 */
START_TEST(test_bad_file_cap)
{
	uint64_t n = GPIN_MAX_PAGES_PER_PIN, held = 0;
	size_t len = n * PAGE;
	char *p = mmap(NULL, len, PROT_READ,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	unsigned long old = set_param("max_pins", 4UL << 20);
	struct gpin_stats st;
	uint32_t h;

	ck_assert(p != MAP_FAILED);
	/* read pins of never-written memory: the shared zero page */
	while (held + n <= GPIN_MAX_PAGES_PER_FILE) {
		ck_assert_int_eq(pin(p, n, GPIN_MODE_LOCKED, 0, NULL, &h), 0);
		held += n;
	}
	ck_assert_int_eq(pin(p, 1, GPIN_MODE_LOCKED, 0, NULL, &h), -ENOSPC);
	stats(&st);
	ck_assert_uint_eq(st.file_live_pages, GPIN_MAX_PAGES_PER_FILE);
	set_param("max_pins", old);
	/* closed with pins outstanding: the teardown checks they are gone */
	munmap(p, len);
}
END_TEST

/*
 * The module-wide cap, max_pins: every pin counts, the same page twice
 * too, in every mode; past it ENOMEM, and unpins give the room back.
 */
START_TEST(test_bad_module_cap)
{
	char *p = map_anon(64 * PAGE, PROT_READ | PROT_WRITE);
	uint32_t h1 = 0, h2 = 0;
	unsigned long old;
	int r[4];

	touch(p, 64 * PAGE, 1);
	old = set_param("max_pins", 100);
	r[0] = pin(p, 64, _i, 0, NULL, &h1);
	r[1] = pin(p, 64, _i, 0, NULL, &h2);
	r[2] = pin(p, 32, _i, 0, NULL, &h2);
	if (!r[0])
		libgpin_unpin(g, h1);
	r[3] = pin(p, 64, _i, 0, NULL, &h1);
	/* the cap back before any assertion can end the test */
	set_param("max_pins", old);
	ck_assert_int_eq(r[0], 0);
	ck_assert_int_eq(r[1], -ENOMEM);
	ck_assert_int_eq(r[2], 0);
	ck_assert_int_eq(r[3], 0);
	ck_assert_int_eq(libgpin_unpin(g, h1), 0);
	ck_assert_int_eq(libgpin_unpin(g, h2), 0);
	munmap(p, 64 * PAGE);
}
END_TEST

/* A forked child may not use its parent's file. */
START_TEST(test_bad_other_mm)
{
	uint32_t h;
	int status;
	pid_t pid;

	ck_assert_int_eq(pin(bad_buf, 1, GPIN_MODE_FAST, 0, NULL, &h), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct gpin_stats st;
		uint32_t h2;
		int bad = 0;

		bad |= pin(bad_buf, 1, GPIN_MODE_FAST, 0, NULL, &h2) != -EPERM;
		bad |= (libgpin_unpin(g, h) != -1 || errno != EPERM) << 1;
		bad |= (libgpin_stats(g, &st) != 0) << 2;
		_exit(bad);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_int_eq(libgpin_unpin(g, h), 0);
}
END_TEST

/* ---- leak accounting ------------------------------------------------------ */

START_TEST(test_close_outstanding)
{
	char *p = map_anon(NPAGES * PAGE, PROT_READ | PROT_WRITE);
	struct gpin_stats st;
	struct libgpin *g2;
	uint32_t h;
	int m;

	touch(p, NPAGES * PAGE, 4);
	g2 = libgpin_open();
	ck_assert(g2);
	for (m = 0; m < GPIN_MODE_COUNT; m++)
		ck_assert_int_eq(libgpin_pin(g2, p, NPAGES, m, GPIN_PIN_WRITE,
					  NULL, &h, NULL), 0);
	stats(&st);
	ck_assert_uint_eq(st.live_pages, 3 * NPAGES);
	ck_assert_uint_eq(st.file_live_pages, 0);
	libgpin_close(g2);
	stats(&st);
	ck_assert_uint_eq(st.live_pages, 0);
	for (m = 0; m < GPIN_MODE_COUNT; m++)
		ck_assert_uint_eq(st.mode[m].live_pages, 0);
	munmap(p, NPAGES * PAGE);
}
END_TEST

/* ---- races ---------------------------------------------------------------- */

#define RACE_LEN	(4 * HPAGE)
#define RACE_MAX	600

static char *race_buf;
static volatile int race_stop;
static unsigned long race_pins, race_errs;

/*
 * Whether a pin was on the pages mapped when it was taken.  After each pin
 * the pinner reads pagemap for its range: every frame it was given must be
 * the one mapped.  Only a mutator that legitimately takes a page away from
 * under a pin (munmap/MAP_FIXED, MADV_DONTNEED: the pin then keeps the old
 * page) can make them differ; those bracket their call with
 * race_zap_begin()/race_zap_end(), and a pin that may have overlapped one
 * is not compared.  Fork, copy-on-write, protection changes, THP split and
 * collapse, and the owner's writes must never move a pinned page: a pin
 * compared across them that does not match was stale.
 * The shared zero page and the huge zero page are not compared: a
 * read-only pin may take them (6.1), and a write replaces them, pinned or
 * not.
 */
static int race_zapping;
static unsigned long race_zaps;
static unsigned long race_checked[GPIN_MODE_COUNT], race_unchecked, race_stale;
static uint64_t race_zero_pfn, race_huge_zero_pfn;

static unsigned int rnd(unsigned int *seed)
{
	*seed = *seed * 1103515245 + 12345;
	return *seed >> 8;
}

static void race_zap_begin(void)
{
	__atomic_add_fetch(&race_zapping, 1, __ATOMIC_SEQ_CST);
}

static void race_zap_end(void)
{
	__atomic_add_fetch(&race_zaps, 1, __ATOMIC_SEQ_CST);
	__atomic_sub_fetch(&race_zapping, 1, __ATOMIC_SEQ_CST);
}

static bool race_zero(uint64_t pfn)
{
	return pfn == race_zero_pfn ||
	       (race_huge_zero_pfn && pfn >= race_huge_zero_pfn &&
		pfn < race_huge_zero_pfn + HPAGE / PAGE);
}

/* The frames of the shared zero page and the huge zero page. */
static void race_find_zero_pfns(void)
{
	char *p = map_aligned(HPAGE, HPAGE);
	volatile char c;

	madvise(p, HPAGE, MADV_NOHUGEPAGE);
	c = p[0];
	race_zero_pfn = pagemap_pfn(p);
	munmap(p, HPAGE);
	p = map_aligned(HPAGE, HPAGE);
	madvise(p, HPAGE, MADV_HUGEPAGE);
	c = p[0];
	(void)c;
	/* 0 (nothing compared against) without a huge zero page */
	race_huge_zero_pfn = pagemap_pfn(p);
	if (race_huge_zero_pfn == race_zero_pfn)
		race_huge_zero_pfn = 0;
	munmap(p, HPAGE);
}

/*
 * Compares one pin's frames with pagemap: the index of the first that
 * differs, or -1 when all match (or pagemap could not be read: an error).
 */
static long race_compare(int pm, const char *addr, size_t n,
			 const uint64_t *pfns, uint64_t *now)
{
	size_t i;

	if (pagemap_pfns(pm, addr, n, now)) {
		__atomic_add_fetch(&race_errs, 1, __ATOMIC_RELAXED);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (!race_zero(pfns[i]) && pfns[i] != now[i])
			return i;
	return -1;
}

static void *race_pinner(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	uint64_t pfns[RACE_MAX], now[RACE_MAX];
	struct libgpin *gp = libgpin_open();
	int pm = open("/proc/self/pagemap", O_RDONLY);
	uint32_t h;

	if (!gp || pm < 0)
		return (void *)1;
	while (!race_stop) {
		size_t n = 1 + rnd(&seed) % RACE_MAX;
		size_t off = rnd(&seed) % (RACE_LEN / PAGE - n);
		unsigned int fl = rnd(&seed) & 1 ? GPIN_PIN_WRITE : 0;
		int mode = rnd(&seed) % GPIN_MODE_COUNT;
		char *addr = race_buf + off * PAGE;
		unsigned long zaps;
		int zapping;
		long bad;

		/* order: zaps, zapping; pin; zapping, zaps (see above) */
		zaps = __atomic_load_n(&race_zaps, __ATOMIC_SEQ_CST);
		zapping = __atomic_load_n(&race_zapping, __ATOMIC_SEQ_CST);
		if (libgpin_pin(gp, addr, n, mode, fl, pfns, &h, NULL)) {
			/* holes, PROT_NONE, ENOMEM: expected while racing */
			if (errno != EFAULT && errno != ENOMEM)
				__atomic_add_fetch(&race_errs, 1, __ATOMIC_RELAXED);
			continue;
		}
		__atomic_add_fetch(&race_pins, 1, __ATOMIC_RELAXED);
		bad = race_compare(pm, addr, n, pfns, now);
		zapping |= __atomic_load_n(&race_zapping, __ATOMIC_SEQ_CST);
		if (zapping || zaps != __atomic_load_n(&race_zaps,
						       __ATOMIC_SEQ_CST)) {
			/* a zap may have taken a page away: no verdict */
			__atomic_add_fetch(&race_unchecked, 1,
					   __ATOMIC_RELAXED);
		} else if (bad >= 0) {
			fprintf(stderr, "# race: %s pin stale at page %zu of "
				"the buffer: pinned pfn %#llx, mapped %#llx\n",
				libgpin_mode_name(mode), off + bad,
				(unsigned long long)pfns[bad],
				(unsigned long long)now[bad]);
			__atomic_add_fetch(&race_stale, 1, __ATOMIC_RELAXED);
		} else {
			__atomic_add_fetch(&race_checked[mode], 1,
					   __ATOMIC_RELAXED);
		}
		if (rnd(&seed) & 1)
			libgpin_unpin(gp, h);	/* else released at close */
		if ((rnd(&seed) & 63) == 0) {
			libgpin_close(gp);
			gp = libgpin_open();
			if (!gp)
				return (void *)1;
		}
	}
	close(pm);
	libgpin_close(gp);
	return NULL;
}

/*
 * Mutator 0 changes the mapping itself (replace, protections) and writes to
 * it; only it may, since it alone knows the range is accessible again when
 * it touches it.  The others zap, fork (COW), split and collapse THPs,
 * which never make the range inaccessible.
 */
static void *race_mutator(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	int owner = seed == 0;

	while (!race_stop) {
		size_t off = (rnd(&seed) % (RACE_LEN / PAGE - 64)) * PAGE;
		char *p = race_buf + off;
		char *huge = race_buf + (off & ~(HPAGE - 1));
		pid_t pid;

		switch (rnd(&seed) % 8) {
		case 0:
			/* munmap + mmap in one step: no hole anyone can take */
			if (owner) {
				race_zap_begin();
				mmap(p, 64 * PAGE, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
				     -1, 0);
				race_zap_end();
			}
			break;
		case 1:
			if (owner) {
				mprotect(p, 64 * PAGE, PROT_READ);
				mprotect(p, 64 * PAGE, PROT_NONE);
				mprotect(p, 64 * PAGE, PROT_READ | PROT_WRITE);
			}
			break;
		case 2:
			race_zap_begin();
			madvise(p, 64 * PAGE, MADV_DONTNEED);
			race_zap_end();
			break;
		case 3:
			pid = fork();	/* COW on every anonymous page */
			if (pid == 0)
				_exit(0);
			if (pid > 0)
				waitpid(pid, NULL, 0);
			break;
		case 4:
			/* zapping one 4K page of a THP splits its pmd */
			race_zap_begin();
			madvise(huge + PAGE, PAGE, MADV_DONTNEED);
			race_zap_end();
			break;
		case 5:
			madvise(huge, HPAGE, MADV_HUGEPAGE);
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
			madvise(huge, HPAGE, MADV_COLLAPSE);
			break;
		default:
			if (owner)
				touch(p, 64 * PAGE, (int)off);
			break;
		}
	}
	return NULL;
}

/*
 * Pinners in every mode against the mutators above: no unexpected error,
 * no stale pin (each pin's frames are compared with pagemap, see
 * race_compare()), nothing left pinned (teardown), no oops or WARN.
 */
START_TEST(test_race)
{
	const char *env = getenv("GPIN_RACE_SECONDS");
	int secs = env ? atoi(env) : 5;
	pthread_t pinners[3], mutators[2];
	void *ret;
	int i;

	race_find_zero_pfns();
	race_buf = map_aligned(RACE_LEN, HPAGE);
	madvise(race_buf, RACE_LEN, MADV_HUGEPAGE);
	touch(race_buf, RACE_LEN, 0);
	race_stop = 0;
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&pinners[i], NULL, race_pinner,
						(void *)(uintptr_t)(i + 1)), 0);
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&mutators[i], NULL,
						race_mutator,
						(void *)(uintptr_t)i), 0);
	sleep(secs);
	race_stop = 1;
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(pthread_join(pinners[i], &ret), 0);
		ck_assert_ptr_null(ret);
	}
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_join(mutators[i], NULL), 0);
	fprintf(stderr, "# race: %lu pins in %d s, %lu unexpected errors; "
		"frames checked against pagemap: fast %lu, locked %lu, "
		"kernel %lu; %lu not comparable (a zap overlapped), %lu stale\n",
		race_pins, secs, race_errs, race_checked[GPIN_MODE_FAST],
		race_checked[GPIN_MODE_LOCKED], race_checked[GPIN_MODE_KERNEL],
		race_unchecked, race_stale);
	ck_assert_uint_gt(race_pins, 0);
	ck_assert_uint_eq(race_errs, 0);
	ck_assert_uint_eq(race_stale, 0);
	for (i = 0; i < GPIN_MODE_COUNT; i++)
		ck_assert_msg(race_checked[i] > 0, "no %s pin was checked",
			      libgpin_mode_name(i));
	munmap(race_buf, RACE_LEN);
}
END_TEST

/* ---- suite ---------------------------------------------------------------- */

static Suite *gpin_suite(void)
{
	Suite *s = suite_create("gpin");
	TCase *tc;

	tc = tcase_create("correctness");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_pfns_4k, 0, GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_pfns_thp, 0, GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_pfns_hugetlb, 0, GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_data_cow, 0, GPIN_MODE_COUNT);
	suite_add_tcase(s, tc);

	tc = tcase_create("fallback");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_fb_not_faulted);
	tcase_add_loop_test(tc, test_fb_prot_none, 0, GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_fb_readonly_write, 0, GPIN_MODE_COUNT);
	tcase_add_test(tc, test_fb_shmem);
	tcase_add_test(tc, test_fb_file);
	tcase_add_loop_test(tc, test_fb_special, 0, GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_fb_two_vmas, 0, GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_fb_hole, 0, GPIN_MODE_COUNT);
	suite_add_tcase(s, tc);

	tc = tcase_create("bad_input");
	tcase_add_checked_fixture(tc, bad_setup, bad_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_bad_pin, 0,
			    sizeof(bad_pins) / sizeof(bad_pins[0]));
	tcase_add_test(tc, test_bad_sizes);
	tcase_add_test(tc, test_ioctl_numbers);
	tcase_add_test(tc, test_bad_handles);
	tcase_add_loop_test(tc, test_bad_pfns_readonly, 0, GPIN_MODE_COUNT);
	tcase_add_test(tc, test_bad_file_cap);
	tcase_add_loop_test(tc, test_bad_module_cap, 0, GPIN_MODE_COUNT);
	tcase_add_test(tc, test_bad_other_mm);
	suite_add_tcase(s, tc);

	tc = tcase_create("leaks");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_close_outstanding);
	suite_add_tcase(s, tc);

	tc = tcase_create("race");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_race);
	suite_add_tcase(s, tc);

	dio_add_tcases(s);
	foll_add_tcases(s);
	mm_add_tcases(s);
	io_add_tcases(s);
	reg_add_tcases(s);
	stress_add_tcases(s);

	return s;
}

int main(void)
{
	struct libgpin *probe = libgpin_open();
	SRunner *sr;
	int failed;

	if (!probe) {
		printf("SKIP: %s\n", libgpin_strerror(errno));
		return 77;
	}
	libgpin_close(probe);

	sr = srunner_create(gpin_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
