// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the whole virtio-blk device as a hostile guest reaches
 * it - the virtio-mmio transport (virtio/mmio.c, regs.c), the ring
 * (virtqueue.c), the device (devices/virtio_blk.c: slots, GET_ID, the
 * service budget, reset with I/O in flight), the parser and the backend
 * helpers (bounce buffers and their budget) - over a fake backend that
 * completes requests only when the input says so.
 *
 * The input is a sequence of 8-byte guest actions: a register write or
 * read, a 32-bit write anywhere in guest RAM (rings, descriptors, headers:
 * also while requests are in flight), the completion of a queue's oldest
 * request (success, or an error), or the VMM exiting and starting again
 * (the device destroyed with whatever is in flight).  Then the guest
 * notifies as a driver that follows the protocol would, the disk
 * completes everything and the queues' threads do what they would.
 *
 * One device serves every input (creating one costs a few milliseconds of
 * page faults, which would make ten million runs take days): each input
 * starts with the guest's view of a new device and ends with the device
 * reset and nothing in flight, checked.
 *
 * What must hold, besides no crash and no sanitizer report:
 *  - the backend: never a request that is already in flight, never more
 *    than a queue's depth, every buffer in guest RAM, every request
 *    submitted completed exactly once;
 *  - the used ring: every head the device pushes is one it took and has
 *    not returned yet (never one from before a reset), is visible in the
 *    guest's used ring at once, with no more bytes than the chain let the
 *    device write; a head the guest offers again while it is out is
 *    followed by NEEDS_RESET;
 *  - memory: bounce bytes never above BLK_BOUNCE_BUDGET, none left at the
 *    end, and the heap never grows by more than that budget and a little;
 *  - no lost wake-up: once the guest notified as the device asked and
 *    everything completed, every chain it published was taken and
 *    completed, or the device is marked NEEDS_RESET.
 * Hooks into the ring accessor are the linker's (--wrap): the device and
 * the accessor are built unchanged.
 */
#include <errno.h>
#include <fcntl.h>
#include <sanitizer/allocator_interface.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <linux/virtio_mmio.h>

#include "devices/blk_backend.h"
#include "devices/virtio_blk.h"
#include "fake_disk.h"
#include "virtio/mmio.h"
#include "virtio/vq_service.h"

/* 1 MiB: requests well over 64 KiB without aliasing a single page */
#define RAM_SIZE	(1u << 20)
#define NQ		2
#define MMIO_BASE	0xd0000000ULL
/* bounced READs the fake disk completes successfully: up to this */
#define BIG_BOUNCE	(64u << 10)
/* what the device may hold beyond bounce buffers while it runs */
#define HEAP_SLACK	(1u << 20)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t ram[RAM_SIZE];
static char disk[] = "/dev/shm/fuzz_virtio_blk_dev.XXXXXX";

static void *translate(void *opaque, uint64_t gpa, uint64_t len)
{
	if (gpa > RAM_SIZE || len > RAM_SIZE - gpa)
		return NULL;
	return ram + gpa;
}

static void set_irq(void *opaque, unsigned int gsi, int level)
{
}

/* ---- the disk: tests/common/fake_disk.c, finishing on the input's word */

/*
 * Every byte of every buffer must be guest RAM; the "disk" writes a READ
 * buffer's first and last byte (ASan sees a pointer outside RAM; the
 * whole 4 MiB of an aliased request would cost more than the rest of the
 * run).
 */
static void check_buffers(const struct blk_io *io)
{
	unsigned int j;

	for (j = 0; j < io->niov; j++) {
		uint8_t *b = io->iov[j].iov_base;
		size_t len = io->iov[j].iov_len;

		if (b < ram || len > RAM_SIZE || b + len > ram + RAM_SIZE)
			abort();
		if (io->op == BLK_IO_READ && !io->bounce && len) {
			b[0] = 0xab;
			b[len - 1] = 0xab;
		}
	}
}

static const struct fake_disk_opts fuzz_disk = {
	/* as on a disk that takes O_DIRECT: misaligned buffers bounce */
	.direct = true,
	.fill = -1,
	.manual = true,
	/*
	 * A bounced READ over 64 KiB fails too: copying it back is the
	 * simplest loop of the device, and at a page fault per 4 KiB of
	 * fresh bounce buffer it took three quarters of the run.
	 */
	.fail_bounce_over = BIG_BOUNCE,
	.on_prep = check_buffers,
};

/* Keeps submissions back (-EAGAIN) while on. */
static bool refuse_submit;
/* Used ring entries the device pushed, all requests. */
static unsigned long pushed;

/* ---- the device, once for all inputs ---------------------------------- */

static struct virtio_blk *blk;
static struct virtio_dev *vdev;
static struct virtio_mmio *mmio;
static struct fake_disk *fk;

static void device_create(void)
{
	struct virtio_blk_params p = {
		.path = disk,
		.nqueues = NQ,
		.backend = &fake_disk_ops,
		.quiet = true,
		.manual = true,
	};
	char err[256];

	fake_disk__set(&fuzz_disk);
	blk = virtio_blk__create(&p, err, sizeof(err));
	if (!blk)
		abort();
	vdev = virtio_blk__dev(blk);
	fk = fake_disk__of(virtio_blk__backend(blk));
	refuse_submit = false;
}

/* The VMM exits: the device goes with whatever it has in flight. */
static void device_destroy(void)
{
	/* the disk aborts on a request lost or finished twice */
	virtio_blk__destroy(blk);
	blk = NULL;
	fk = NULL;
}

/* ---- what the guest can see: the model the hooks keep ------------------ */

static struct model_queue {
	bool out[VIRTIO_BLK_QUEUE_SIZE];	/* taken, not yet in used */
	uint64_t writable[VIRTIO_BLK_QUEUE_SIZE];	/* bytes, by head */
	unsigned int nout;
	int last_pop;			/* the head virtq__unpop puts back */
	bool reoffered;			/* taken while out: NEEDS_RESET due */
	uint16_t notified_avail;	/* avail->idx at the last notify */
	uint16_t avail_event;		/* what the device last wrote there */
} mq[NQ];

/* Each queue's service: what its thread would wake on and sleep for. */
static struct vq_service *svc[NQ];

static unsigned int queue_of(const struct virtq *vq)
{
	unsigned int i;

	for (i = 0; vdev->vqs && i < NQ; i++)
		if (vq == &vdev->vqs[i])
			return i;
	abort();	/* not a ring of this device */
}

static void model_reset(void)
{
	unsigned int i;

	memset(mq, 0, sizeof(mq));
	for (i = 0; i < NQ; i++)
		mq[i].last_pop = -1;
}

int __real_virtq__pop(struct virtq *vq, struct virtq_chain *chain);
int __wrap_virtq__pop(struct virtq *vq, struct virtq_chain *chain);
void __real_virtq__unpop(struct virtq *vq);
void __wrap_virtq__unpop(struct virtq *vq);
void __real_virtq__push(struct virtq *vq, uint16_t head, uint32_t len);
void __wrap_virtq__push(struct virtq *vq, uint16_t head, uint32_t len);
void __real_virtq__enable_notify(struct virtq *vq);
void __wrap_virtq__enable_notify(struct virtq *vq);
void __real_virtq__disable_notify(struct virtq *vq);
void __wrap_virtq__disable_notify(struct virtq *vq);
void __real_virtq__set_event_idx(struct virtq *vq, bool on);
void __wrap_virtq__set_event_idx(struct virtq *vq, bool on);
int __real_vq_service__init(struct vq_service *s,
			    const struct vq_service_ops *ops, void *opaque,
			    unsigned int q, const char *name);
int __wrap_vq_service__init(struct vq_service *s,
			    const struct vq_service_ops *ops, void *opaque,
			    unsigned int q, const char *name);

int __wrap_virtq__pop(struct virtq *vq, struct virtq_chain *chain)
{
	struct model_queue *m = &mq[queue_of(vq)];
	int ret = __real_virtq__pop(vq, chain);

	m->last_pop = -1;
	if (ret != 1)
		return ret;
	if (m->out[chain->head]) {
		m->reoffered = true;
		return ret;
	}
	m->out[chain->head] = true;
	m->writable[chain->head] = chain->writable_len;
	m->nout++;
	m->last_pop = chain->head;
	return ret;
}

void __wrap_virtq__unpop(struct virtq *vq)
{
	struct model_queue *m = &mq[queue_of(vq)];

	if (m->last_pop < 0)
		abort();	/* puts back what it did not just take */
	m->out[m->last_pop] = false;
	m->nout--;
	m->last_pop = -1;
	__real_virtq__unpop(vq);
}

void __wrap_virtq__push(struct virtq *vq, uint16_t head, uint32_t len)
{
	struct model_queue *m = &mq[queue_of(vq)];
	struct vring_used_elem *e;

	/* never taken, taken before a reset, or returned already */
	if (head >= vq->size || !m->out[head])
		abort();
	if (len > m->writable[head])
		abort();	/* claims more than the chain could take */
	__real_virtq__push(vq, head, len);
	e = &vq->used->ring[(uint16_t)(vq->used_idx - 1) & (vq->size - 1)];
	if (e->id != head || e->len != len || vq->used->idx != vq->used_idx)
		abort();	/* not what the guest sees */
	m->out[head] = false;
	m->nout--;
	pushed++;
}

static void note_avail_event(struct virtq *vq)
{
	struct vring vr = { .num = vq->size, .used = vq->used };

	mq[queue_of(vq)].avail_event = vring_avail_event(&vr);
}

void __wrap_virtq__enable_notify(struct virtq *vq)
{
	__real_virtq__enable_notify(vq);
	note_avail_event(vq);
}

void __wrap_virtq__disable_notify(struct virtq *vq)
{
	__real_virtq__disable_notify(vq);
	note_avail_event(vq);
}

void __wrap_virtq__set_event_idx(struct virtq *vq, bool on)
{
	__real_virtq__set_event_idx(vq, on);
	note_avail_event(vq);
}

/* (The hand-over wake comes from inside vq_service.c: --wrap misses it.) */
int __wrap_vq_service__init(struct vq_service *s,
			    const struct vq_service_ops *ops, void *opaque,
			    unsigned int q, const char *name)
{
	if (q < NQ)
		svc[q] = s;
	return __real_vq_service__init(s, ops, opaque, q, name);
}

/* ---- the checks ------------------------------------------------------- */

static uint32_t status(void)
{
	uint32_t v;

	virtio_mmio__ops.read(mmio, VIRTIO_MMIO_STATUS, &v, 4);
	return v;
}

static bool needs_reset(void)
{
	return status() & VIRTIO_CONFIG_S_NEEDS_RESET;
}

/* After every action: bounded memory, and a re-offered head was refused. */
static void check_step(size_t heap0)
{
	struct blk_backend *be = virtio_blk__backend(blk);
	unsigned int i;

	if (be->bounce_bytes > BLK_BOUNCE_BUDGET)
		abort();
	if (__sanitizer_get_current_allocated_bytes() >
	    heap0 + BLK_BOUNCE_BUDGET + HEAP_SLACK)
		abort();	/* memory the budget does not cover */
	for (i = 0; i < NQ; i++) {
		if (mq[i].reoffered && !needs_reset())
			abort();	/* a busy head taken again */
		mq[i].reoffered = false;
	}
}

static bool queue_live(unsigned int qi)
{
	return (status() & VIRTIO_CONFIG_S_DRIVER_OK) && !needs_reset() &&
	       vdev->ready[qi];
}

static void write_reg(uint16_t off, uint32_t val)
{
	uint64_t v = val;

	off %= VIRTIO_MMIO_WINDOW - 3;
	/* a notification the transport drops is none */
	if (off == VIRTIO_MMIO_QUEUE_NOTIFY && val < NQ && queue_live(val))
		mq[val].notified_avail =
			__atomic_load_n(&vdev->vqs[val].avail->idx,
					__ATOMIC_RELAXED);
	virtio_mmio__ops.write(mmio, off, &v, 4);
	if (off == VIRTIO_MMIO_STATUS && val == 0) {
		/* a reset: what was out is no longer the guest's to get */
		model_reset();
	}
}

/*
 * Whether a driver that follows the protocol notifies queue @qi for the
 * chains it published since its last notification (section 2.7.13).
 * Only on a ring whose notification fields hold what the device wrote
 * there (the guest may have overwritten its used ring): else -1.
 */
static int driver_would_notify(unsigned int qi)
{
	struct virtq *vq = &vdev->vqs[qi];
	struct vring vr = { .num = vq->size, .used = vq->used };
	uint16_t now = __atomic_load_n(&vq->avail->idx, __ATOMIC_RELAXED);
	uint16_t flags = vq->used->flags;

	if (vq->event_idx) {
		if (vring_avail_event(&vr) != mq[qi].avail_event)
			return -1;
		return vring_need_event(mq[qi].avail_event, now,
					mq[qi].notified_avail);
	}
	if (flags != (vq->no_notify ? VRING_USED_F_NO_NOTIFY : 0))
		return -1;
	return !vq->no_notify;
}

/* What the thread of queue @qi drains when it wakes: a hand-over. */
static bool thread_woken(unsigned int qi)
{
	eventfd_t v;

	return eventfd_read(svc[qi]->wake_fd, &v) == 0;
}

/*
 * The end of the input: the guest notifies where a driver would, the disk
 * completes everything, and each queue's thread serves the queue when it
 * would wake: a completion, a hand-over, or its timer (quiet, retry) as
 * the device's own sleep_us() sets it.  Then nothing is left at the disk,
 * and a live queue has taken every chain the guest published and
 * returned each.
 */
static void drain_and_check(size_t heap0)
{
	bool checkable[NQ], busy = true;
	uint16_t published[NQ];
	unsigned int i, rounds;

	refuse_submit = false;
	fake_disk__set_full(fk, false);
	for (i = 0; i < NQ; i++) {
		checkable[i] = queue_live(i);
		if (checkable[i]) {
			int n = driver_would_notify(i);

			/*
			 * What the guest published; the device may yet write
			 * the ring itself (a READ or a status byte the guest
			 * pointed there), which publishes nothing.
			 */
			published[i] = __atomic_load_n(&vdev->vqs[i].avail->idx,
						       __ATOMIC_RELAXED);
			checkable[i] = n >= 0;
			if (n > 0)
				write_reg(VIRTIO_MMIO_QUEUE_NOTIFY, i);
		}
	}
	for (rounds = 0; busy; rounds++) {
		/* a thread that wakes for ever without getting anywhere */
		if (rounds > 10000)
			abort();
		busy = false;
		for (i = 0; i < NQ; i++) {
			bool woken = thread_woken(i) |
				     fake_disk__finish_oldest(fk, i, false) ||
				     fake_disk__unreaped(fk, i);
			long timer = svc[i]->ops->sleep_us(svc[i]->opaque, i);

			if (!woken && timer < 0)
				continue;
			virtio_blk__service(blk, i, !woken);
			busy = true;
		}
		check_step(heap0);
	}
	for (i = 0; i < NQ; i++) {
		struct virtq *vq = &vdev->vqs[i];
		uint16_t left;

		if (fake_disk__held(fk, i))
			abort();	/* left at the backend, never submitted */
		if (!checkable[i] || !queue_live(i))
			continue;
		if (mq[i].nout)
			abort();	/* taken and never returned */
		/* the device wrote the index itself (the guest pointed a
		 * buffer there): no longer what the guest published */
		if (__atomic_load_n(&vq->avail->idx, __ATOMIC_RELAXED) !=
		    published[i])
			continue;
		/* more than a ring's worth: the index went back, the guest
		 * broke the ring itself */
		left = published[i] - vq->last_avail;
		if (left && left <= vq->size)
			abort();	/* published, asked for, never taken */
	}
}

/* ---- the guest ------------------------------------------------------- */

enum { A_WRITE_REG, A_READ_REG, A_WRITE_RAM, A_COMPLETE, A_RESTART, A_KINDS };
#define A_RESTART_MAGIC	0x74697865	/* "exit" */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd = mkstemp(disk);

	if (fd < 0 || ftruncate(fd, 8 << 20))	/* 4 MiB requests fit */
		abort();
	close(fd);
	device_create();
	return 0;
}

static void transport_create(void)
{
	struct virtq_mem mem = { .translate = translate };

	unsigned int i;

	model_reset();
	for (i = 0; i < NQ; i++)
		thread_woken(i);	/* the last input's hand-overs */
	mmio = virtio_mmio__create(vdev, &mem, MMIO_BASE, 16, set_irq, NULL);
	if (!mmio)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int restarted = 0;
	size_t heap0, i;

	memset(ram, 0, sizeof(ram));
	transport_create();
	heap0 = __sanitizer_get_current_allocated_bytes();
	for (i = 0; i + 8 <= size; i += 8) {
		const uint8_t *a = data + i;
		uint16_t off;
		uint32_t val;
		uint64_t v;

		memcpy(&off, a + 2, sizeof(off));
		memcpy(&val, a + 4, sizeof(val));
		switch (a[0] % A_KINDS) {
		case A_WRITE_REG:
			write_reg(off, val);
			break;
		case A_READ_REG:
			virtio_mmio__ops.read(mmio, off % (VIRTIO_MMIO_WINDOW - 3),
					      &v, 4);
			break;
		case A_WRITE_RAM:
			/* a[1]: the address's bits 16-23 */
			memcpy(ram + (((uint32_t)a[1] << 16 | off) %
				      (RAM_SIZE - 3)), &val, 4);
			break;
		case A_COMPLETE:
			/*
			 * a[1]: bit 7 fail, bit 6 only the quiet timer
			 * (nothing finishes), bit 5 toggle a backend that
			 * keeps requests back; then the queue's thread
			 * wakes and serves the queue.
			 */
			if (a[1] & 0x20) {
				refuse_submit = !refuse_submit;
				fake_disk__set_full(fk, refuse_submit);
			}
			if (!(a[1] & 0x40))
				fake_disk__finish_oldest(fk, a[1] % NQ,
							 a[1] & 0x80);
			thread_woken(a[1] % NQ);
			virtio_blk__service(blk, a[1] % NQ, a[1] & 0x40);
			break;
		case A_RESTART:
			/*
			 * Slow (a new device faults its memory in): only
			 * with this value, and once an input.
			 */
			if (val != A_RESTART_MAGIC || restarted++)
				break;
			virtio_mmio__destroy(mmio);
			device_destroy();
			device_create();
			transport_create();
			heap0 = __sanitizer_get_current_allocated_bytes();
			break;
		}
		check_step(heap0);
	}
	drain_and_check(heap0);
	/* the next input finds a device just reset, nothing in flight */
	virtio_mmio__destroy(mmio);
	mmio = NULL;
	if (virtio_blk__backend(blk)->bounce_bytes)
		abort();	/* a bounce buffer never given back */
	if (!fake_disk__idle(fk))
		abort();	/* a request lost or completed twice */
	/* what a seed reached (tests/fuzz/corpus-dev/make-seeds.py) */
	if (getenv("FUZZ_BLK_DEV_VERBOSE"))
		fprintf(stderr, "fuzz_virtio_blk_dev: %lu requests submitted, "
			"%lu used entries\n", fake_disk__requests(fk), pushed);
	return 0;
}
