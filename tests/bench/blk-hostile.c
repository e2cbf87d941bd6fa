// SPDX-License-Identifier: GPL-2.0-only
/*
 * blk-hostile: what the most hostile virtio-blk driver can make gpin-vmm
 * spend in memory, per disk (issue 13's memory bar: under 64 MiB of RSS
 * beyond guest RAM).  A benchmark, not a test: meson builds it, nobody
 * runs it in CI; docs/results/hostile-memory.md has its results.
 *
 * The device is built as gpin-vmm builds it (vm_disk.c): virtio_blk__create
 * with the real backend ("kernel": io_uring on an O_DIRECT file; "fast",
 * "locked" when /dev/gpin exists), on virtio-mmio or virtio-pci, its queue
 * threads running, over guest RAM mapped as vm.c maps it (anonymous,
 * MADV_DONTFORK) and translated by vm_guest__hva().  Driver threads (the
 * "vCPUs") write its registers and rings directly.
 *
 * The driver, on every queue (256 entries each), keeps the ring full of
 * what costs the VMM most and re-offers each chain the moment it is back:
 *  - 100 data chains of SEG_MAX (128) x SIZE_MAX (32 KiB) = 4 MiB, whose
 *    heads share one run of 128 data descriptors - all of them the same
 *    32 KiB of guest memory - so a queue has up to 100 x 4 MiB in flight;
 *    by role, which rotates at every reset: misaligned READ, misaligned
 *    WRITE (each needs a 4 MiB bounce buffer), aligned READ, aligned WRITE
 *    (the kernel pins the aliased pages 128 times a request);
 *  - FLUSH, and DISCARD and WRITE_ZEROES of the largest range (2 GiB);
 *  - three GET_ID chains, a storm of requests that complete on the spot;
 * and, each cycle (1 s), offers a head that is still in flight again
 * (NEEDS_RESET), then resets the device with I/O in flight and sets it
 * all up again.
 *
 * A sampler reads VmRSS (/proc/self/status) and the guest RAM mapping's
 * Rss (/proc/self/smaps) every 20 ms; the peak of their difference is the
 * memory the device holds beyond guest RAM.  VmHWM minus the guest's Rss
 * (constant: the driver touches its pages first) bounds the peak between
 * samples.  Each configuration runs in a child process of its own, so
 * none inherits another's heap.
 *
 * Usage: blk-hostile [--queues 2,64] [--seconds 30] [--transport mmio|pci]
 *                    [--pin kernel|fast|locked] [--dir /var/tmp]
 *                    [--ram-mib 512] [--vcpus 2] [--cycle-ms 1000]
 *                    [--roles all|aligned|misaligned] [--json FILE]
 * Prints a Markdown table row per configuration; --json appends a line
 * of JSON per configuration to FILE.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/pci_regs.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_pci.h>

#include "libgpin.h"

#include "arch/x86/layout.h"
#include "devices/virtio_blk.h"
#include "devices/virtio_blk_req.h"
#include "pci/pci.h"
#include "virtio/mmio.h"
#include "virtio/pci.h"
#include "vm.h"
#include "vm_guest.h"

#define QSZ		VIRTIO_BLK_QUEUE_SIZE
#define BAR_ADDR	PCI_MMIO_START
#define MIB		(1024.0 * 1024.0)
#define BAR_MIB		64

/* Guest memory: each queue's rings and buffers, then the shared data. */
#define QUEUE_BASE	0x100000ULL
#define QUEUE_STRIDE	0x10000ULL
#define Q_DESC		0x0000
#define Q_AVAIL		0x1000
#define Q_USED		0x2000
#define Q_HDR		0x3000		/* 16 bytes a head */
#define Q_STATUS	0x4000		/* a byte a head */
#define Q_RANGE		0x4400		/* discard / write-zeroes ranges */
#define Q_ID		0x5000		/* GET_ID buffers, 32 bytes a head */
#define DATA		0x4000000ULL	/* 64 MiB: the one data buffer */
#define DATA_LEN	0x10000ULL

/* The descriptor table of every queue. */
#define DATA_HEADS	100		/* heads 0..99: header -> the run */
#define RUN		127		/* 128 data descriptors, then status */
#define RUN_STATUS	(RUN + VIRTIO_BLK_SEG_MAX)
#define H_FLUSH		100		/* two chains of two */
#define H_DISCARD	104		/* two chains of three */
#define H_WZEROES	110		/* two chains of three */
#define H_GETID		116		/* three chains of three */
#define NCHAINS		(DATA_HEADS + 2 + 2 + 2 + 3)
#define RANGE_SECTORS	(1u << 22)	/* the device's largest: 2 GiB */
#define DISK_BYTES	(4ULL << 30)	/* sparse; ranges and 4 MiB I/O fit */

/* What a queue's data chains are this cycle: (queue + cycle) % NROLES. */
enum role { MIS_READ, MIS_WRITE, AL_READ, AL_WRITE, NROLES };

struct opts {
	unsigned int queues[8], nconfigs;
	unsigned int seconds, vcpus, cycle_ms, ram_mib;
	bool pci;
	const char *pin, *dir, *json;
	const char *roles;		/* all, aligned, misaligned */
};

/* ---- one configuration, in its own process ------------------------------ */

struct dq {				/* the driver's side of a queue */
	uint16_t avail_idx, used_seen;
	bool out[QSZ];
	_Atomic bool reoffer;		/* offer a busy head again, once */
};

static struct run {
	const struct opts *o;
	unsigned int nq;
	struct vm vm;			/* RAM only: what vm_guest__hva reads */
	struct virtio_blk *blk;
	struct virtio_mmio *mmio;
	struct virtio_pci *vpci;
	struct dq *dq;
	unsigned int cycle;
	unsigned int base;		/* the table's rotation this cycle */
	pthread_rwlock_t rw;		/* drivers read, a reset writes */
	_Atomic bool stop;

	/* results */
	unsigned int resets, needs_resets;
	double max_reset_ms;
	_Atomic uint64_t notifies;
} R;

static void *gva(uint64_t gpa)
{
	return vm_guest__hva(&R.vm, gpa, 1);
}

static uint64_t qbase(unsigned int q)
{
	return QUEUE_BASE + q * QUEUE_STRIDE;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
}

/* ---- the transport, as the guest sees it -------------------------------- */

static void *mmio_translate(void *opaque, uint64_t gpa, uint64_t len)
{
	return vm_guest__hva(opaque, gpa, len);
}

static void no_irq(void *opaque, unsigned int gsi, int level)
{
}

static void no_msi(void *opaque, uint64_t addr, uint32_t data)
{
}

static void reg_w(uint64_t off, unsigned int len, uint64_t v)
{
	if (R.vpci)
		virtio_pci__bar_ops.write(R.vpci, off, &v, len);
	else
		virtio_mmio__ops.write(R.mmio, off, &v, len);
}

static uint64_t reg_r(uint64_t off, unsigned int len)
{
	uint64_t v = 0;

	if (R.vpci)
		virtio_pci__bar_ops.read(R.vpci, off, &v, len);
	else
		virtio_mmio__ops.read(R.mmio, off, &v, len);
	return v;
}

static void set_status(uint8_t s)
{
	if (R.vpci)
		reg_w(VIRTIO_PCI_COMMON_STATUS, 1, s);
	else
		reg_w(VIRTIO_MMIO_STATUS, 4, s);
}

static uint8_t get_status(void)
{
	return R.vpci ? reg_r(VIRTIO_PCI_COMMON_STATUS, 1) :
			reg_r(VIRTIO_MMIO_STATUS, 4);
}

/* Accepts every feature the device offers (EVENT_IDX, DISCARD, ...). */
static void negotiate(void)
{
	unsigned int half;

	for (half = 0; half < 2; half++) {
		uint32_t f;

		if (R.vpci) {
			reg_w(VIRTIO_PCI_COMMON_DFSELECT, 4, half);
			f = reg_r(VIRTIO_PCI_COMMON_DF, 4);
			reg_w(VIRTIO_PCI_COMMON_GFSELECT, 4, half);
			reg_w(VIRTIO_PCI_COMMON_GF, 4, f);
		} else {
			reg_w(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 4, half);
			f = reg_r(VIRTIO_MMIO_DEVICE_FEATURES, 4);
			reg_w(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 4, half);
			reg_w(VIRTIO_MMIO_DRIVER_FEATURES, 4, f);
		}
	}
}

static void queue_setup(unsigned int q)
{
	uint64_t b = qbase(q);

	if (R.vpci) {
		reg_w(VIRTIO_PCI_COMMON_Q_SELECT, 2, q);
		reg_w(VIRTIO_PCI_COMMON_Q_SIZE, 2, QSZ);
		reg_w(VIRTIO_PCI_COMMON_Q_DESCLO, 8, b + Q_DESC);
		reg_w(VIRTIO_PCI_COMMON_Q_AVAILLO, 8, b + Q_AVAIL);
		reg_w(VIRTIO_PCI_COMMON_Q_USEDLO, 8, b + Q_USED);
		reg_w(VIRTIO_PCI_COMMON_Q_ENABLE, 2, 1);
		return;
	}
	reg_w(VIRTIO_MMIO_QUEUE_SEL, 4, q);
	reg_w(VIRTIO_MMIO_QUEUE_NUM, 4, QSZ);
	reg_w(VIRTIO_MMIO_QUEUE_DESC_LOW, 4, b + Q_DESC);
	reg_w(VIRTIO_MMIO_QUEUE_DESC_HIGH, 4, 0);
	reg_w(VIRTIO_MMIO_QUEUE_AVAIL_LOW, 4, b + Q_AVAIL);
	reg_w(VIRTIO_MMIO_QUEUE_AVAIL_HIGH, 4, 0);
	reg_w(VIRTIO_MMIO_QUEUE_USED_LOW, 4, b + Q_USED);
	reg_w(VIRTIO_MMIO_QUEUE_USED_HIGH, 4, 0);
	reg_w(VIRTIO_MMIO_QUEUE_READY, 4, 1);
}

static void notify(unsigned int q)
{
	atomic_fetch_add_explicit(&R.notifies, 1, memory_order_relaxed);
	if (R.vpci)
		reg_w(VIRTIO_PCI_NOTIFY_OFF + q * VIRTIO_PCI_NOTIFY_MULT, 2, q);
	else
		reg_w(VIRTIO_MMIO_QUEUE_NOTIFY, 4, q);
}

/* ---- the rings ---------------------------------------------------------- */

static struct vring_desc *desc(unsigned int q, unsigned int i)
{
	return (struct vring_desc *)gva(qbase(q) + Q_DESC) + i;
}

static struct vring_avail *avail(unsigned int q)
{
	return gva(qbase(q) + Q_AVAIL);
}

static struct vring_used *used(unsigned int q)
{
	return gva(qbase(q) + Q_USED);
}

/*
 * The table's layout moves by R.base every cycle: logical index i is
 * descriptor (i + base) % QSZ, so over the cycles every head number - and
 * every request slot of the device - carries a request of 128 segments.
 */
static uint16_t phys(unsigned int i)
{
	return (i + R.base) % QSZ;
}

static unsigned int logical(unsigned int d)
{
	return (d + QSZ - R.base) % QSZ;
}

/* Logical descriptor @i, chained to logical @next. */
static void set_desc(unsigned int q, unsigned int i, uint64_t addr,
		     uint32_t len, uint16_t flags, uint16_t next)
{
	*desc(q, phys(i)) = (struct vring_desc) { addr, len, flags,
						  phys(next) };
}

static void header(unsigned int q, unsigned int h, uint32_t type,
		   uint64_t sector)
{
	struct virtio_blk_outhdr hdr = { .type = type, .sector = sector };

	memcpy(gva(qbase(q) + Q_HDR + 16 * h), &hdr, sizeof(hdr));
}

/* A chain of header | [16-byte range] | status from head @h on. */
static void small_chain(unsigned int q, unsigned int h, uint32_t type,
			bool range)
{
	uint64_t b = qbase(q);
	unsigned int i = h;

	header(q, h, type, 0);
	set_desc(q, i, b + Q_HDR + 16 * h, 16, VRING_DESC_F_NEXT, i + 1);
	if (range) {
		struct virtio_blk_discard_write_zeroes r = {
			.sector = 0, .num_sectors = RANGE_SECTORS,
		};

		memcpy(gva(b + Q_RANGE + 16 * h), &r, sizeof(r));
		i++;
		set_desc(q, i, b + Q_RANGE + 16 * h, 16, VRING_DESC_F_NEXT,
			 i + 1);
	}
	if (type == VIRTIO_BLK_T_GET_ID) {
		i++;
		set_desc(q, i, b + Q_ID + 32 * h, VIRTIO_BLK_ID_BYTES,
			 VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, i + 1);
	}
	i++;
	set_desc(q, i, b + Q_STATUS + h, 1, VRING_DESC_F_WRITE, 0);
}

/* Every chain of queue @q for this cycle's role. */
static enum role role_of(unsigned int q)
{
	enum role role = (q + R.cycle) % NROLES;

	/* --roles aligned: no bounce buffers; misaligned: only those */
	if (!strcmp(R.o->roles, "aligned"))
		return role == MIS_READ ? AL_READ :
		       role == MIS_WRITE ? AL_WRITE : role;
	if (!strcmp(R.o->roles, "misaligned"))
		return role == AL_READ ? MIS_READ :
		       role == AL_WRITE ? MIS_WRITE : role;
	return role;
}

static void write_chains(unsigned int q)
{
	enum role role = role_of(q);
	bool read = role == MIS_READ || role == AL_READ;
	bool misaligned = role == MIS_READ || role == MIS_WRITE;
	uint16_t dflags = VRING_DESC_F_NEXT | (read ? VRING_DESC_F_WRITE : 0);
	unsigned int h, i;

	for (h = 0; h < DATA_HEADS; h++) {
		/* writes stay in the first 64 MiB of the disk */
		uint64_t sector = (read ? h : h % 16) * (4ULL << 20) / 512;

		header(q, h, read ? VIRTIO_BLK_T_IN : VIRTIO_BLK_T_OUT, sector);
		set_desc(q, h, qbase(q) + Q_HDR + 16 * h, 16,
			 VRING_DESC_F_NEXT, RUN);
	}
	for (i = 0; i < VIRTIO_BLK_SEG_MAX; i++)
		set_desc(q, RUN + i, DATA + misaligned, VIRTIO_BLK_SIZE_MAX,
			 dflags, RUN + i + 1);
	set_desc(q, RUN_STATUS, qbase(q) + Q_STATUS + RUN_STATUS, 1,
		 VRING_DESC_F_WRITE, 0);
	for (h = H_FLUSH; h < H_DISCARD; h += 2)
		small_chain(q, h, VIRTIO_BLK_T_FLUSH, false);
	for (h = H_DISCARD; h < H_WZEROES; h += 3)
		small_chain(q, h, VIRTIO_BLK_T_DISCARD, true);
	for (h = H_WZEROES; h < H_GETID; h += 3)
		small_chain(q, h, VIRTIO_BLK_T_WRITE_ZEROES, true);
	for (h = H_GETID; h < H_GETID + 9; h += 3)
		small_chain(q, h, VIRTIO_BLK_T_GET_ID, false);
}

static bool is_head(unsigned int h)
{
	if (h < DATA_HEADS)
		return true;
	if (h >= H_FLUSH && h < H_DISCARD)
		return (h - H_FLUSH) % 2 == 0;
	if (h >= H_DISCARD && h < H_GETID + 9)
		return (h - H_DISCARD) % 3 == 0;
	return false;
}

/* Offers logical head @h. */
static void publish(unsigned int q, uint16_t h)
{
	struct dq *d = &R.dq[q];

	avail(q)->ring[d->avail_idx++ % QSZ] = phys(h);
	d->out[h] = true;
}

static void publish_done(unsigned int q)
{
	__atomic_store_n(&avail(q)->idx, R.dq[q].avail_idx, __ATOMIC_RELEASE);
	notify(q);
}

/* Resets the rings and offers every chain. */
static void start_queues(void)
{
	unsigned int q, h;

	for (q = 0; q < R.nq; q++) {
		memset(gva(qbase(q)), 0, Q_HDR);
		memset(&R.dq[q], 0, sizeof(R.dq[q]));
		write_chains(q);
	}
	set_status(VIRTIO_CONFIG_S_ACKNOWLEDGE);
	set_status(VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	negotiate();
	set_status(VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
		   VIRTIO_CONFIG_S_FEATURES_OK);
	for (q = 0; q < R.nq; q++)
		queue_setup(q);
	set_status(VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
		   VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK);
	for (q = 0; q < R.nq; q++) {
		for (h = 0; h < QSZ; h++)
			if (is_head(h))
				publish(q, h);
		publish_done(q);
	}
}

/* One look at queue @q: every chain back is offered again at once. */
static void drive_queue(unsigned int q)
{
	struct dq *d = &R.dq[q];
	uint16_t idx = __atomic_load_n(&used(q)->idx, __ATOMIC_ACQUIRE);
	bool any = false;
	unsigned int h;

	while (d->used_seen != idx) {
		h = logical(used(q)->ring[d->used_seen++ % QSZ].id % QSZ);
		if (is_head(h) && d->out[h]) {
			d->out[h] = false;
			publish(q, h);
			any = true;
		}
	}
	if (atomic_exchange(&d->reoffer, false)) {
		for (h = 0; h < DATA_HEADS && !d->out[h]; h++)
			;
		if (h < DATA_HEADS) {	/* still in flight: offered again */
			avail(q)->ring[d->avail_idx++ % QSZ] = phys(h);
			any = true;
		}
	}
	if (any)
		publish_done(q);
}

struct vcpu_arg {
	unsigned int id;
};

static void *vcpu_thread(void *arg)
{
	unsigned int id = ((struct vcpu_arg *)arg)->id, q;

	while (!atomic_load(&R.stop)) {
		pthread_rwlock_rdlock(&R.rw);
		for (q = id; q < R.nq; q += R.o->vcpus)
			drive_queue(q);
		pthread_rwlock_unlock(&R.rw);
		sched_yield();
	}
	return NULL;
}

/* A reset with I/O in flight, then everything set up again. */
static void reset_cycle(void)
{
	double t0;

	pthread_rwlock_wrlock(&R.rw);
	if (get_status() & VIRTIO_CONFIG_S_NEEDS_RESET)
		R.needs_resets++;
	t0 = now_s();
	set_status(0);
	t0 = (now_s() - t0) * 1000;
	if (t0 > R.max_reset_ms)
		R.max_reset_ms = t0;
	R.resets++;
	R.cycle++;
	R.base = (R.base + 131) % QSZ;
	start_queues();
	pthread_rwlock_unlock(&R.rw);
}

/* ---- memory ------------------------------------------------------------- */

struct mem {
	long rss_kib, hwm_kib, anon_kib, file_kib;
	long guest_kib;			/* Rss of the guest RAM mapping */
};

static long status_field(const char *text, const char *name)
{
	const char *p = strstr(text, name);

	return p ? strtol(p + strlen(name), NULL, 10) : -1;
}

static void read_mem(struct mem *m)
{
	static char buf[1 << 16];
	char line[256], range[64];
	bool in_ram = false;
	FILE *f;
	size_t n;

	f = fopen("/proc/self/status", "r");
	n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	buf[n] = '\0';
	if (f)
		fclose(f);
	m->rss_kib = status_field(buf, "VmRSS:");
	m->hwm_kib = status_field(buf, "VmHWM:");
	m->anon_kib = status_field(buf, "RssAnon:");
	m->file_kib = status_field(buf, "RssFile:");
	m->guest_kib = 0;
	snprintf(range, sizeof(range), "%lx-", (unsigned long)R.vm.ram);
	f = fopen("/proc/self/smaps", "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		/* "lo-hi perms ..." starts a mapping; "Name: value" follow */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in_ram = !strncmp(line, range, strlen(range));
		else if (in_ram && !strncmp(line, "Rss:", 4)) {
			m->guest_kib = strtol(line + 4, NULL, 10);
			break;
		}
	}
	if (f)
		fclose(f);
}

static struct sampler {
	pthread_t thread;
	_Atomic bool stop;
	long peak_beyond_kib, peak_anon_kib, peak_file_kib;
	uint64_t peak_bounce;
	unsigned int samples;
} S;

static void *sampler_thread(void *arg)
{
	struct blk_backend *be = virtio_blk__backend(R.blk);

	while (!atomic_load(&S.stop)) {
		struct mem m;
		uint64_t b = atomic_load(&be->bounce_bytes);

		read_mem(&m);
		if (m.rss_kib - m.guest_kib > S.peak_beyond_kib) {
			S.peak_beyond_kib = m.rss_kib - m.guest_kib;
			S.peak_anon_kib = m.anon_kib;
			S.peak_file_kib = m.file_kib;
		}
		if (b > S.peak_bounce)
			S.peak_bounce = b;
		S.samples++;
		sleep_ms(20);
	}
	return NULL;
}

/* ---- the configuration -------------------------------------------------- */

/* The backend of pin=@pin, into @p (as vm_disk.c's disk_backend()). */
static void backend_of(const char *pin, struct virtio_blk_params *p)
{
	p->backend = &blk_backend_uring_ops;
	if (!strcmp(pin, "fast") || !strcmp(pin, "locked")) {
		p->backend = &blk_backend_gpin_ops;
		p->gpin_mode = !strcmp(pin, "fast") ? GPIN_MODE_FAST :
						      GPIN_MODE_LOCKED;
	}
}

/* The scratch disk: sparse, DISK_BYTES. */
static int make_disk(const char *dir, char *path, size_t len)
{
	int fd;

	snprintf(path, len, "%s/blk-hostile.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, DISK_BYTES)) {
		perror(path);
		return -1;
	}
	close(fd);
	return 0;
}

static int map_ram(uint64_t size)
{
	/* as vm_setup_ram(): one private anonymous mapping, no fork */
	R.vm.ram = mmap(NULL, size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (R.vm.ram == MAP_FAILED)
		return -errno;
	if (madvise(R.vm.ram, size, MADV_DONTFORK))
		return -errno;
	R.vm.ram_size = size;
	R.vm.lowmem_size = size < MMIO_HOLE_START ? size : MMIO_HOLE_START;
	/* touched now, so the guest's Rss stays what it is */
	memset(gva(QUEUE_BASE), 0, R.nq * QUEUE_STRIDE);
	memset(gva(DATA), 0x5a, DATA_LEN);
	return 0;
}

static int make_device(const char *path)
{
	struct virtq_mem mem = { .translate = mmio_translate, .opaque = &R.vm };
	struct virtio_blk_params p = {
		.path = path,
		.nqueues = R.nq,
		.quiet = true,
	};
	char err[256];

	backend_of(R.o->pin, &p);
	R.blk = virtio_blk__create(&p, err, sizeof(err));
	if (!R.blk) {
		fprintf(stderr, "blk-hostile: %s\n", err);
		return -1;
	}
	if (R.o->pci) {
		R.vpci = virtio_pci__create(virtio_blk__dev(R.blk), &mem,
					    BAR_ADDR, no_msi, NULL);
		if (R.vpci)
			pci_func__write(virtio_pci__func(R.vpci), PCI_COMMAND, 2,
					PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	} else {
		R.mmio = virtio_mmio__create(virtio_blk__dev(R.blk), &mem,
					     VIRTIO_MMIO_START, 16, no_irq, NULL);
	}
	return R.vpci || R.mmio ? 0 : -1;
}

static void destroy_device(void)
{
	if (R.vpci)
		virtio_pci__destroy(R.vpci);
	if (R.mmio)
		virtio_mmio__destroy(R.mmio);
	R.vpci = NULL;
	R.mmio = NULL;
	virtio_blk__destroy(R.blk);
	R.blk = NULL;
}

static long beyond(void)
{
	struct mem m;

	read_mem(&m);
	return m.rss_kib - m.guest_kib;
}

/* glibc malloc settings from the environment, for the record. */
static const char *malloc_env(void)
{
	static char s[256];
	const char *t = getenv("GLIBC_TUNABLES"), *a = getenv("MALLOC_ARENA_MAX");

	snprintf(s, sizeof(s), "%s%s%s%s", t ? "GLIBC_TUNABLES=" : "",
		 t ? t : "", a ? " MALLOC_ARENA_MAX=" : "", a ? a : "");
	return s;
}

/* Runs one configuration and writes its JSON line to @out. */
static int run_config(const struct opts *o, unsigned int nq, FILE *out)
{
	pthread_t vcpus[64];
	struct vcpu_arg args[64];
	struct virtio_blk_queue_stats st;
	uint64_t requests = 0, errors = 0, bytes = 0;
	long before, idle, after_reset, after_destroy, hwm_beyond;
	pthread_rwlockattr_t ra;
	char path[256];
	double end, next_reset, next_reoffer;
	struct mem m;
	unsigned int i;

	R.o = o;
	R.nq = nq;
	R.dq = calloc(nq, sizeof(*R.dq));
	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setkind_np(&ra,
		PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&R.rw, &ra);
	if (!R.dq || map_ram((uint64_t)o->ram_mib << 20) ||
	    make_disk(o->dir, path, sizeof(path)))
		return -1;
	before = beyond();
	if (make_device(path)) {
		unlink(path);
		return -1;
	}
	start_queues();
	sleep_ms(100);
	idle = beyond();

	pthread_create(&S.thread, NULL, sampler_thread, NULL);
	for (i = 0; i < o->vcpus; i++) {
		args[i].id = i;
		pthread_create(&vcpus[i], NULL, vcpu_thread, &args[i]);
	}
	end = now_s() + o->seconds;
	next_reset = now_s() + o->cycle_ms / 1000.0;
	next_reoffer = now_s() + o->cycle_ms / 2000.0;
	while (now_s() < end) {
		sleep_ms(10);
		if (now_s() >= next_reoffer) {
			atomic_store(&R.dq[R.cycle % nq].reoffer, true);
			next_reoffer = next_reset + o->cycle_ms / 2000.0;
		}
		if (now_s() >= next_reset ||
		    (get_status() & VIRTIO_CONFIG_S_NEEDS_RESET)) {
			reset_cycle();
			next_reset = now_s() + o->cycle_ms / 1000.0;
			next_reoffer = now_s() + o->cycle_ms / 2000.0;
		}
	}
	atomic_store(&R.stop, true);
	for (i = 0; i < o->vcpus; i++)
		pthread_join(vcpus[i], NULL);
	for (i = 0; i < nq; i++) {
		virtio_blk__stats(R.blk, i, &st);
		requests += st.requests;
		errors += st.errors;
		bytes += st.bytes;
	}
	set_status(0);
	sleep_ms(100);
	atomic_store(&S.stop, true);
	pthread_join(S.thread, NULL);
	after_reset = beyond();
	read_mem(&m);
	hwm_beyond = m.hwm_kib - m.guest_kib;
	destroy_device();
	after_destroy = beyond();
	unlink(path);

	fprintf(out, "{\"queues\": %u, \"transport\": \"%s\", \"pin\": \"%s\", "
		"\"roles\": \"%s\", \"malloc\": \"%s\", \"seconds\": %u, \"vcpus\": %u, \"guest_ram_mib\": %u, "
		"\"before_kib\": %ld, \"idle_kib\": %ld, \"peak_kib\": %ld, "
		"\"peak_anon_kib\": %ld, \"peak_file_kib\": %ld, "
		"\"hwm_beyond_kib\": %ld, \"after_reset_kib\": %ld, "
		"\"after_destroy_kib\": %ld, \"guest_rss_kib\": %ld, "
		"\"peak_bounce_bytes\": %" PRIu64 ", \"samples\": %u, "
		"\"requests\": %" PRIu64 ", \"errors\": %" PRIu64 ", "
		"\"bytes\": %" PRIu64 ", \"notifies\": %" PRIu64 ", "
		"\"resets\": %u, \"needs_reset\": %u, "
		"\"max_reset_ms\": %.1f}\n",
		nq, o->pci ? "pci" : "mmio", o->pin, o->roles, malloc_env(),
		o->seconds, o->vcpus,
		o->ram_mib, before, idle, S.peak_beyond_kib, S.peak_anon_kib,
		S.peak_file_kib, hwm_beyond, after_reset, after_destroy,
		m.guest_kib, S.peak_bounce, S.samples, requests, errors, bytes,
		(uint64_t)atomic_load(&R.notifies), R.resets, R.needs_resets,
		R.max_reset_ms);
	return 0;
}

/* ---- the parent: one child a configuration, a table -------------------- */

static long json_long(const char *line, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\": ", key);
	p = strstr(line, k);
	return p ? strtol(p + strlen(k), NULL, 10) : -1;
}

static double json_double(const char *line, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\": ", key);
	p = strstr(line, k);
	return p ? strtod(p + strlen(k), NULL) : -1;
}

static void print_row(const char *line)
{
	long peak = json_long(line, "peak_kib"), hwm = json_long(line,
								  "hwm_beyond_kib");
	long worst = peak > hwm ? peak : hwm;

	printf("| %ld | %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | "
	       "%ld | %ld | %ld | %ld | %.0f | %s |\n",
	       json_long(line, "queues"), strstr(line, "\"pci\"") ? "pci" :
	       "mmio", strstr(line, "\"kernel\"") ? "kernel" :
	       strstr(line, "\"fast\"") ? "fast" : "locked",
	       json_long(line, "before_kib") / 1024.0,
	       json_long(line, "idle_kib") / 1024.0, peak / 1024.0,
	       hwm / 1024.0, json_long(line, "peak_bounce_bytes") / MIB,
	       json_long(line, "after_destroy_kib") / 1024.0,
	       json_long(line, "requests"), json_long(line, "errors"),
	       json_long(line, "resets"), json_long(line, "needs_reset"),
	       json_double(line, "max_reset_ms"),
	       worst < BAR_MIB * 1024 ? "yes" : "**no**");
}

static void usage(void)
{
	fprintf(stderr, "usage: blk-hostile [--queues N[,N...]] [--seconds S] "
		"[--transport mmio|pci] [--pin kernel|fast|locked] "
		"[--dir DIR] [--ram-mib M] [--vcpus V] [--cycle-ms MS] "
		"[--roles all|aligned|misaligned] [--json FILE]\n");
	exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
	int i;

	*o = (struct opts) {
		.queues = { 2, VIRTIO_BLK_MAX_QUEUES }, .nconfigs = 2,
		.seconds = 30, .vcpus = 2, .cycle_ms = 1000, .ram_mib = 512,
		.pin = "kernel", .dir = "/var/tmp", .roles = "all",
	};
	for (i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *s, *tok;

		if (!v)
			usage();
		if (!strcmp(argv[i], "--queues")) {
			o->nconfigs = 0;
			s = strdup(v);
			for (tok = strtok(s, ","); tok && o->nconfigs < 8;
			     tok = strtok(NULL, ","))
				o->queues[o->nconfigs++] = atoi(tok);
		} else if (!strcmp(argv[i], "--seconds")) {
			o->seconds = atoi(v);
		} else if (!strcmp(argv[i], "--transport")) {
			o->pci = !strcmp(v, "pci");
		} else if (!strcmp(argv[i], "--pin")) {
			o->pin = v;
		} else if (!strcmp(argv[i], "--dir")) {
			o->dir = v;
		} else if (!strcmp(argv[i], "--ram-mib")) {
			o->ram_mib = atoi(v);
		} else if (!strcmp(argv[i], "--vcpus")) {
			o->vcpus = atoi(v);
		} else if (!strcmp(argv[i], "--cycle-ms")) {
			o->cycle_ms = atoi(v);
		} else if (!strcmp(argv[i], "--roles")) {
			o->roles = v;
		} else if (!strcmp(argv[i], "--json")) {
			o->json = v;
		} else {
			usage();
		}
		i++;
	}
	if (o->vcpus < 1 || o->vcpus > 64 || !o->seconds || !o->cycle_ms ||
	    o->ram_mib < 128 || (strcmp(o->roles, "all") &&
				 strcmp(o->roles, "aligned") &&
				 strcmp(o->roles, "misaligned")))
		usage();
	for (i = 0; i < (int)o->nconfigs; i++)
		if (!o->queues[i] || o->queues[i] > VIRTIO_BLK_MAX_QUEUES)
			usage();
	if (strcmp(o->pin, "kernel") && access("/dev/gpin", F_OK)) {
		fprintf(stderr, "blk-hostile: pin=%s needs /dev/gpin "
			"(gpin.ko)\n", o->pin);
		exit(77);
	}
}

int main(int argc, char **argv)
{
	struct opts o;
	unsigned int i;
	int failed = 0;

	parse(argc, argv, &o);
	printf("| queues | transport | pin | before device (MiB) | idle "
	       "(MiB) | peak beyond guest RAM (MiB) | VmHWM - guest (MiB) | "
	       "bounce peak (MiB) | after destroy (MiB) | requests | failed | "
	       "resets | NEEDS_RESET | longest reset (ms) | under %d MiB |\n",
	       BAR_MIB);
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	fflush(stdout);
	for (i = 0; i < o.nconfigs; i++) {
		char line[2048] = "";
		int fds[2], status;
		pid_t pid;
		FILE *in;

		if (pipe(fds))
			return 1;
		pid = fork();
		if (pid == 0) {
			FILE *out = fdopen(fds[1], "w");

			close(fds[0]);
			_exit(run_config(&o, o.queues[i], out) || fclose(out) ?
			      1 : 0);
		}
		close(fds[1]);
		in = fdopen(fds[0], "r");
		if (!in || !fgets(line, sizeof(line), in))
			line[0] = '\0';
		if (in)
			fclose(in);
		waitpid(pid, &status, 0);
		if (!line[0] || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "blk-hostile: %u queues: failed\n",
				o.queues[i]);
			failed = 1;
			continue;
		}
		print_row(line);
		fflush(stdout);
		if (o.json) {
			FILE *j = fopen(o.json, "a");

			if (j) {
				fputs(line, j);
				fclose(j);
			}
		}
	}
	return failed;
}
