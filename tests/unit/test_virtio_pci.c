// SPDX-License-Identifier: GPL-2.0-only
/*
 * The virtio-pci transport (virtio/pci.c) and MSI-X (pci/msix.c) over a
 * fake device, driven as Linux's virtio_pci_modern does and as a hostile
 * guest might: the capabilities, the common configuration at right and
 * wrong widths, queue setup, vectors the table does not hold, the MSI-X
 * table's masking and pending bits, notifications.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_ids.h>

#include "unit.h"
#include "virtio/pci.h"

#define MEM_SIZE	0x10000ULL
#define NQ		2
#define QMAX		16
#define DESC		0x1000ULL
#define AVAIL		0x2000ULL
#define USED		0x3000ULL
#define BAR_ADDR	0xe0000000u
#define MSI_ADDR	0xfee00000u
#define NVEC		(NQ + 1)

static uint8_t *gmem;
static struct virtio_dev vdev;
static struct virtio_pci *vp;
static struct pci_func *fn;
static unsigned int notified[NQ], activated, resets;
static struct {
	uint64_t addr;
	uint32_t data;
} sent[16];
static unsigned int nsent;

static void *gtranslate(void *opaque, uint64_t gpa, uint64_t len)
{
	if (gpa + len < gpa || gpa + len > MEM_SIZE)
		return NULL;
	return gmem + gpa;
}

static void fake_config_read(struct virtio_dev *d, uint32_t off, void *data,
			     unsigned int len)
{
	memset(data, 0x40 + off, len);
}

static int fake_activate(struct virtio_dev *d)
{
	activated++;
	return 0;
}

static void fake_notify(struct virtio_dev *d, unsigned int q)
{
	ck_assert_uint_lt(q, NQ);
	notified[q]++;
}

static void fake_reset(struct virtio_dev *d)
{
	resets++;
}

static const struct virtio_dev_ops fake_ops = {
	.config_read = fake_config_read,
	.activate = fake_activate,
	.notify = fake_notify,
	.reset = fake_reset,
};

static void send_msi(void *opaque, uint64_t addr, uint32_t data)
{
	ck_assert_uint_lt(nsent, 16);
	sent[nsent].addr = addr;
	sent[nsent].data = data;
	nsent++;
}

static void setup(void)
{
	struct virtq_mem mem = { .translate = gtranslate };

	gmem = calloc(1, MEM_SIZE);
	ck_assert_ptr_nonnull(gmem);
	vdev = (struct virtio_dev) {
		.device_id = VIRTIO_ID_BLOCK,
		.features = 1ULL << VIRTIO_F_VERSION_1 |
			    1ULL << VIRTIO_RING_F_EVENT_IDX,
		.num_queues = NQ,
		.queue_max = QMAX,
		.config_size = 24,
		.ops = &fake_ops,
	};
	memset(notified, 0, sizeof(notified));
	activated = resets = nsent = 0;
	vp = virtio_pci__create(&vdev, &mem, BAR_ADDR, send_msi, NULL);
	ck_assert_ptr_nonnull(vp);
	fn = virtio_pci__func(vp);
}

static void teardown(void)
{
	virtio_pci__destroy(vp);
	free(gmem);
}

static uint32_t cfg_rd(unsigned int off, unsigned int len)
{
	return pci_func__read(fn, off, len);
}

static void cfg_wr(unsigned int off, unsigned int len, uint32_t v)
{
	pci_func__write(fn, off, len, v);
}

static uint64_t bar_rd(uint64_t off, unsigned int len)
{
	uint64_t v = 0;

	virtio_pci__bar_ops.read(vp, off, &v, len);
	return v;
}

static void bar_wr(uint64_t off, unsigned int len, uint64_t v)
{
	virtio_pci__bar_ops.write(vp, off, &v, len);
}

static uint64_t common_rd(unsigned int off, unsigned int len)
{
	return bar_rd(VIRTIO_PCI_COMMON_OFF + off, len);
}

static void common_wr(unsigned int off, unsigned int len, uint64_t v)
{
	bar_wr(VIRTIO_PCI_COMMON_OFF + off, len, v);
}

static void status(uint8_t s)
{
	common_wr(VIRTIO_PCI_COMMON_STATUS, 1, s);
}

/* The offset of the first capability with @id (and virtio @type). */
static unsigned int find_cap(uint8_t id, int type)
{
	unsigned int off, n = 0;

	for (off = cfg_rd(PCI_CAPABILITY_LIST, 1); off && n < 48;
	     off = cfg_rd(off + PCI_CAP_LIST_NEXT, 1), n++)
		if (cfg_rd(off, 1) == id &&
		    (type < 0 || cfg_rd(off + VIRTIO_PCI_CAP_CFG_TYPE, 1) ==
				 (unsigned int)type))
			return off;
	return 0;
}

/* MSI-X table entry @v: address, data, unmasked. */
static void msix_entry(unsigned int v, uint32_t addr, uint32_t data)
{
	uint64_t e = VIRTIO_PCI_MSIX_TABLE_OFF + v * MSIX_ENTRY_SIZE;

	bar_wr(e + PCI_MSIX_ENTRY_LOWER_ADDR, 4, addr);
	bar_wr(e + PCI_MSIX_ENTRY_UPPER_ADDR, 4, 0);
	bar_wr(e + PCI_MSIX_ENTRY_DATA, 4, data);
	bar_wr(e + PCI_MSIX_ENTRY_VECTOR_CTRL, 4, 0);
}

static void msix_control(uint16_t flags)
{
	unsigned int cap = find_cap(PCI_CAP_ID_MSIX, -1);

	cfg_wr(cap + PCI_MSIX_FLAGS, 2, flags);
}

static void setup_queue(unsigned int q, uint16_t num, uint16_t vector)
{
	uint64_t base = q * 0x4000ULL;

	common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, q);
	common_wr(VIRTIO_PCI_COMMON_Q_SIZE, 2, num);
	common_wr(VIRTIO_PCI_COMMON_Q_MSIX, 2, vector);
	common_wr(VIRTIO_PCI_COMMON_Q_DESCLO, 8, base + DESC);
	common_wr(VIRTIO_PCI_COMMON_Q_AVAILLO, 4, base + AVAIL);
	common_wr(VIRTIO_PCI_COMMON_Q_AVAILHI, 4, 0);
	common_wr(VIRTIO_PCI_COMMON_Q_USEDLO, 4, base + USED);
	common_wr(VIRTIO_PCI_COMMON_Q_USEDHI, 4, 0);
	common_wr(VIRTIO_PCI_COMMON_Q_ENABLE, 2, 1);
}

/*
 * What Linux's virtio_pci_modern does: memory and bus mastering on,
 * MSI-X on with vector 0 for config and 1 + q for queue q, features,
 * both queues, DRIVER_OK.
 */
static void driver_init(void)
{
	unsigned int v;

	cfg_wr(PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	msix_control(PCI_MSIX_FLAGS_ENABLE);
	for (v = 0; v < NVEC; v++)
		msix_entry(v, MSI_ADDR, 0x40 + v);
	status(0);
	status(VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	common_wr(VIRTIO_PCI_COMMON_GFSELECT, 4, 1);
	common_wr(VIRTIO_PCI_COMMON_GF, 4, 1);	/* VERSION_1 */
	status(VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
	       VIRTIO_CONFIG_S_FEATURES_OK);
	ck_assert(common_rd(VIRTIO_PCI_COMMON_STATUS, 1) &
		  VIRTIO_CONFIG_S_FEATURES_OK);
	common_wr(VIRTIO_PCI_COMMON_MSIX, 2, 0);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_MSIX, 2), 0);
	setup_queue(0, QMAX, 1);
	setup_queue(1, QMAX / 2, 2);
	status(VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
	       VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK);
	ck_assert_uint_eq(activated, 1);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_STATUS, 1) &
			  VIRTIO_CONFIG_S_NEEDS_RESET, 0);
}

START_TEST(test_identity)
{
	unsigned int cap;

	ck_assert_uint_eq(cfg_rd(PCI_VENDOR_ID, 2), 0x1af4);
	ck_assert_uint_eq(cfg_rd(PCI_DEVICE_ID, 2), 0x1042);
	ck_assert_uint_eq(cfg_rd(PCI_REVISION_ID, 1), 1);
	ck_assert_uint_eq(cfg_rd(PCI_SUBSYSTEM_VENDOR_ID, 2), 0x1af4);
	ck_assert_uint_eq(cfg_rd(PCI_INTERRUPT_PIN, 1), 0);
	ck_assert_uint_eq(cfg_rd(PCI_BASE_ADDRESS_0, 4), BAR_ADDR);

	cap = find_cap(PCI_CAP_ID_VNDR, VIRTIO_PCI_CAP_COMMON_CFG);
	ck_assert_uint_ne(cap, 0);
	ck_assert_uint_eq(cfg_rd(cap + VIRTIO_PCI_CAP_BAR, 1), 0);
	ck_assert_uint_eq(cfg_rd(cap + VIRTIO_PCI_CAP_OFFSET, 4),
			  VIRTIO_PCI_COMMON_OFF);
	ck_assert_uint_ge(cfg_rd(cap + VIRTIO_PCI_CAP_LENGTH, 4),
			  sizeof(struct virtio_pci_common_cfg));
	cap = find_cap(PCI_CAP_ID_VNDR, VIRTIO_PCI_CAP_NOTIFY_CFG);
	ck_assert_uint_ne(cap, 0);
	ck_assert_uint_eq(cfg_rd(cap + VIRTIO_PCI_CAP_LEN, 1), 20);
	ck_assert_uint_eq(cfg_rd(cap + 16, 4), VIRTIO_PCI_NOTIFY_MULT);
	ck_assert_uint_eq(cfg_rd(cap + VIRTIO_PCI_CAP_OFFSET, 4),
			  VIRTIO_PCI_NOTIFY_OFF);
	cap = find_cap(PCI_CAP_ID_VNDR, VIRTIO_PCI_CAP_ISR_CFG);
	ck_assert_uint_eq(cfg_rd(cap + VIRTIO_PCI_CAP_OFFSET, 4),
			  VIRTIO_PCI_ISR_OFF);
	cap = find_cap(PCI_CAP_ID_VNDR, VIRTIO_PCI_CAP_DEVICE_CFG);
	ck_assert_uint_eq(cfg_rd(cap + VIRTIO_PCI_CAP_LENGTH, 4), 24);

	cap = find_cap(PCI_CAP_ID_MSIX, -1);
	ck_assert_uint_ne(cap, 0);
	ck_assert_uint_eq(cfg_rd(cap + PCI_MSIX_FLAGS, 2) &
			  PCI_MSIX_FLAGS_QSIZE, NVEC - 1);
	ck_assert_uint_eq(cfg_rd(cap + PCI_MSIX_TABLE, 4),
			  VIRTIO_PCI_MSIX_TABLE_OFF | 0);
	ck_assert_uint_eq(cfg_rd(cap + PCI_MSIX_PBA, 4),
			  VIRTIO_PCI_MSIX_PBA_OFF | 0);
	/* Table size is read-only. */
	cfg_wr(cap + PCI_MSIX_FLAGS, 2, 0xffff);
	ck_assert_uint_eq(cfg_rd(cap + PCI_MSIX_FLAGS, 2),
			  PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL |
			  (NVEC - 1));
}
END_TEST

/* With memory decoding off the BAR is not there. */
START_TEST(test_bar_off)
{
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_NUMQ, 2), 0xffff);
	status(VIRTIO_CONFIG_S_ACKNOWLEDGE);
	cfg_wr(PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_NUMQ, 2), NQ);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_STATUS, 1), 0);
}
END_TEST

START_TEST(test_common_fields)
{
	cfg_wr(PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	common_wr(VIRTIO_PCI_COMMON_DFSELECT, 4, 1);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_DF, 4), 1);
	common_wr(VIRTIO_PCI_COMMON_DFSELECT, 4, 0);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_DF, 4),
			  1u << VIRTIO_RING_F_EVENT_IDX);
	common_wr(VIRTIO_PCI_COMMON_DFSELECT, 4, 7);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_DF, 4), 0);
	/* Queue fields as after reset: size = max, no vector. */
	common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, 1);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_Q_SIZE, 2), QMAX);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_Q_MSIX, 2),
			  VIRTIO_MSI_NO_VECTOR);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_Q_NOFF, 2), 1);
	common_wr(VIRTIO_PCI_COMMON_Q_DESCLO, 8, 0x123456789abcdef0ULL);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_Q_DESCLO, 8),
			  0x123456789abcdef0ULL);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_Q_DESCHI, 4), 0x12345678);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_Q_DESCLO, 4), 0x9abcdef0);
}
END_TEST

/* Accesses of the wrong width or at no field: read 0, change nothing. */
static const struct {
	unsigned int off, len;
} bad_access[] = {
	{ VIRTIO_PCI_COMMON_DF, 2 },
	{ VIRTIO_PCI_COMMON_DF, 8 },
	{ VIRTIO_PCI_COMMON_DF + 1, 1 },
	{ VIRTIO_PCI_COMMON_NUMQ, 4 },
	{ VIRTIO_PCI_COMMON_NUMQ, 1 },
	{ VIRTIO_PCI_COMMON_STATUS, 2 },
	{ VIRTIO_PCI_COMMON_STATUS, 4 },
	{ VIRTIO_PCI_COMMON_Q_SIZE, 4 },
	{ VIRTIO_PCI_COMMON_Q_DESCHI, 8 },
	{ VIRTIO_PCI_COMMON_Q_DESCLO + 2, 2 },
	{ VIRTIO_PCI_COMMON_LEN, 2 },		/* queue_notify_data */
	{ VIRTIO_PCI_COMMON_LEN + 2, 2 },	/* queue_reset */
	{ 0x800, 4 },
};

START_TEST(test_common_bad_access)
{
	cfg_wr(PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	ck_assert_uint_eq(common_rd(bad_access[_i].off, bad_access[_i].len), 0);
	common_wr(bad_access[_i].off, bad_access[_i].len, ~0ULL);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_STATUS, 1), 0);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_NUMQ, 2), NQ);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_Q_SIZE, 2), QMAX);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_Q_DESCLO, 8), 0);
	ck_assert_uint_eq(resets, 0);
}
END_TEST

START_TEST(test_vectors)
{
	cfg_wr(PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	common_wr(VIRTIO_PCI_COMMON_MSIX, 2, NVEC - 1);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_MSIX, 2), NVEC - 1);
	common_wr(VIRTIO_PCI_COMMON_MSIX, 2, NVEC);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_MSIX, 2),
			  VIRTIO_MSI_NO_VECTOR);
	common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, 0);
	common_wr(VIRTIO_PCI_COMMON_Q_MSIX, 2, 1);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_Q_MSIX, 2), 1);
	common_wr(VIRTIO_PCI_COMMON_Q_MSIX, 2, 0x7fff);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_Q_MSIX, 2),
			  VIRTIO_MSI_NO_VECTOR);
	/* A queue that does not exist has no vector to set. */
	common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, NQ);
	common_wr(VIRTIO_PCI_COMMON_Q_MSIX, 2, 1);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_Q_MSIX, 2),
			  VIRTIO_MSI_NO_VECTOR);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_Q_SIZE, 2), 0);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_Q_ENABLE, 2), 0);
}
END_TEST

/* Each queue's used buffers raise that queue's vector, nothing else. */
START_TEST(test_per_queue_msi)
{
	driver_init();
	virtio_dev__signal_used(&vdev, 1);
	virtio_dev__signal_used(&vdev, 0);
	ck_assert_uint_eq(nsent, 2);
	ck_assert_uint_eq(sent[0].addr, MSI_ADDR);
	ck_assert_uint_eq(sent[0].data, 0x42);
	ck_assert_uint_eq(sent[1].data, 0x41);
	/* No ISR bit with MSI-X: the driver never reads it. */
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_ISR_OFF, 1), 0);
	virtio_dev__signal_used(&vdev, NQ);
	ck_assert_uint_eq(nsent, 2);
	/* A queue detached from its vector interrupts no one. */
	common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, 0);
	common_wr(VIRTIO_PCI_COMMON_Q_MSIX, 2, VIRTIO_MSI_NO_VECTOR);
	virtio_dev__signal_used(&vdev, 0);
	ck_assert_uint_eq(nsent, 2);
}
END_TEST

START_TEST(test_msix_masking)
{
	uint64_t ctrl1 = VIRTIO_PCI_MSIX_TABLE_OFF + MSIX_ENTRY_SIZE +
			 PCI_MSIX_ENTRY_VECTOR_CTRL;

	driver_init();
	/* Entry mask: pending, then delivered on unmask. */
	bar_wr(ctrl1, 4, PCI_MSIX_ENTRY_CTRL_MASKBIT);
	virtio_dev__signal_used(&vdev, 0);
	ck_assert_uint_eq(nsent, 0);
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_MSIX_PBA_OFF, 8), 1 << 1);
	bar_wr(ctrl1, 4, 0);
	ck_assert_uint_eq(nsent, 1);
	ck_assert_uint_eq(sent[0].data, 0x41);
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_MSIX_PBA_OFF, 8), 0);

	/* Function mask: the same for every vector. */
	msix_control(PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL);
	virtio_dev__signal_used(&vdev, 0);
	virtio_dev__signal_used(&vdev, 1);
	ck_assert_uint_eq(nsent, 1);
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_MSIX_PBA_OFF, 8), 3 << 1);
	msix_control(PCI_MSIX_FLAGS_ENABLE);
	ck_assert_uint_eq(nsent, 3);
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_MSIX_PBA_OFF, 8), 0);

	/* MSI-X off: no INTx to fall back on, nothing sent or pending. */
	msix_control(0);
	virtio_dev__signal_used(&vdev, 0);
	ck_assert_uint_eq(nsent, 3);
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_MSIX_PBA_OFF, 8), 0);
}
END_TEST

/* A message that is not an x86 MSI would be a DMA write: dropped. */
START_TEST(test_msix_bad_address)
{
	driver_init();
	msix_entry(1, 0x1000, 0x41);
	virtio_dev__signal_used(&vdev, 0);
	bar_wr(VIRTIO_PCI_MSIX_TABLE_OFF + MSIX_ENTRY_SIZE +
	       PCI_MSIX_ENTRY_UPPER_ADDR, 4, 1);
	bar_wr(VIRTIO_PCI_MSIX_TABLE_OFF + MSIX_ENTRY_SIZE +
	       PCI_MSIX_ENTRY_LOWER_ADDR, 4, MSI_ADDR);
	virtio_dev__signal_used(&vdev, 0);
	ck_assert_uint_eq(nsent, 0);
}
END_TEST

static const struct {
	uint64_t off;
	unsigned int len;
} bad_table[] = {
	{ 0, 2 }, { 0, 1 }, { 2, 4 }, { 4, 8 },
	{ NVEC * MSIX_ENTRY_SIZE, 4 },			/* past the table */
	{ NVEC * MSIX_ENTRY_SIZE - 4, 8 },
	{ VIRTIO_PCI_REGION_SIZE - 4, 4 },
};

START_TEST(test_msix_table_bad_access)
{
	uint64_t off = VIRTIO_PCI_MSIX_TABLE_OFF + bad_table[_i].off;

	cfg_wr(PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	bar_wr(off, bad_table[_i].len, ~0ULL);
	ck_assert_uint_eq(bar_rd(off, bad_table[_i].len), 0);
	/* Entry 0 unchanged: still masked, address 0. */
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_MSIX_TABLE_OFF, 8), 0);
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_MSIX_TABLE_OFF +
				 PCI_MSIX_ENTRY_VECTOR_CTRL, 4),
			  PCI_MSIX_ENTRY_CTRL_MASKBIT);
	/* The PBA is read-only and as long as it is. */
	bar_wr(VIRTIO_PCI_MSIX_PBA_OFF, 8, ~0ULL);
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_MSIX_PBA_OFF, 8), 0);
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_MSIX_PBA_OFF + 8, 8), 0);
}
END_TEST

START_TEST(test_msix_table_qword)
{
	cfg_wr(PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	bar_wr(VIRTIO_PCI_MSIX_TABLE_OFF + MSIX_ENTRY_SIZE, 8,
	       0x00000001fee01000ULL);
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_MSIX_TABLE_OFF + MSIX_ENTRY_SIZE,
				 4), 0xfee01000);
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_MSIX_TABLE_OFF + MSIX_ENTRY_SIZE +
				 4, 4), 1);
	/* Only the mask bit of vector control is writable. */
	bar_wr(VIRTIO_PCI_MSIX_TABLE_OFF + PCI_MSIX_ENTRY_VECTOR_CTRL, 4,
	       0xfffffffe);
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_MSIX_TABLE_OFF +
				 PCI_MSIX_ENTRY_VECTOR_CTRL, 4), 0);
}
END_TEST

START_TEST(test_notify)
{
	uint64_t n1 = VIRTIO_PCI_NOTIFY_OFF + VIRTIO_PCI_NOTIFY_MULT;

	cfg_wr(PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	bar_wr(n1, 2, 1);		/* before DRIVER_OK */
	ck_assert_uint_eq(notified[1], 0);
	driver_init();
	ck_assert_uint_eq(virtio_pci__notify_addr(vp, 1), BAR_ADDR + n1);
	bar_wr(n1, 2, 1);
	ck_assert_uint_eq(notified[1], 1);
	bar_wr(VIRTIO_PCI_NOTIFY_OFF, 2, 0);
	ck_assert_uint_eq(notified[0], 1);
	/* Another queue's number, a misaligned or odd-sized write, a
	 * queue that does not exist: nothing. */
	bar_wr(n1, 2, 0);
	bar_wr(n1 + 2, 2, 1);
	bar_wr(n1, 1, 1);
	bar_wr(VIRTIO_PCI_NOTIFY_OFF + NQ * VIRTIO_PCI_NOTIFY_MULT, 2, NQ);
	ck_assert_uint_eq(notified[0], 1);
	ck_assert_uint_eq(notified[1], 1);
}
END_TEST

static const struct {
	const char *what;
	uint16_t num;
	uint64_t desc;
} bad_queue[] = {
	{ "size not a power of two", 12, DESC },
	{ "size above the maximum", QMAX * 2, DESC },
	{ "size 0", 0, DESC },
	{ "ring outside RAM", QMAX, MEM_SIZE },
	{ "misaligned ring", QMAX, DESC + 8 },
};

/* The queue is refused; NEEDS_RESET and a config MSI tell the driver. */
START_TEST(test_bad_queue_setup)
{
	cfg_wr(PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	msix_control(PCI_MSIX_FLAGS_ENABLE);
	msix_entry(0, MSI_ADDR, 0x40);
	status(VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	common_wr(VIRTIO_PCI_COMMON_MSIX, 2, 0);
	common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, 0);
	common_wr(VIRTIO_PCI_COMMON_Q_SIZE, 2, bad_queue[_i].num);
	common_wr(VIRTIO_PCI_COMMON_Q_DESCLO, 8, bad_queue[_i].desc);
	common_wr(VIRTIO_PCI_COMMON_Q_AVAILLO, 8, AVAIL);
	common_wr(VIRTIO_PCI_COMMON_Q_USEDLO, 8, USED);
	common_wr(VIRTIO_PCI_COMMON_Q_ENABLE, 2, 1);
	ck_assert_msg(common_rd(VIRTIO_PCI_COMMON_Q_ENABLE, 2) == 0,
		      "%s: enabled", bad_queue[_i].what);
	ck_assert(common_rd(VIRTIO_PCI_COMMON_STATUS, 1) &
		  VIRTIO_CONFIG_S_NEEDS_RESET);
	ck_assert_uint_eq(nsent, 1);
	ck_assert_uint_eq(sent[0].data, 0x40);
	/* ISR says "configuration", once. */
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_ISR_OFF, 1), VIRTIO_PCI_ISR_CONFIG);
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_ISR_OFF, 1), 0);
	/* A reset clears it all. */
	status(0);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_STATUS, 1), 0);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_MSIX, 2),
			  VIRTIO_MSI_NO_VECTOR);
	ck_assert_uint_eq(resets, 1);
}
END_TEST

/* Queue setup is frozen once enabled, and everything at DRIVER_OK. */
START_TEST(test_queue_frozen)
{
	driver_init();
	common_wr(VIRTIO_PCI_COMMON_Q_SELECT, 2, 1);
	common_wr(VIRTIO_PCI_COMMON_Q_SIZE, 2, 4);
	common_wr(VIRTIO_PCI_COMMON_Q_DESCLO, 8, 0);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_Q_SIZE, 2), QMAX / 2);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_Q_DESCLO, 8),
			  0x4000 + DESC);
	/* Writing 0 to queue_enable is not the driver's to do. */
	common_wr(VIRTIO_PCI_COMMON_Q_ENABLE, 2, 0);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_Q_ENABLE, 2), 1);
	/* Features are frozen at FEATURES_OK. */
	common_wr(VIRTIO_PCI_COMMON_GFSELECT, 4, 0);
	common_wr(VIRTIO_PCI_COMMON_GF, 4, 1u << VIRTIO_RING_F_EVENT_IDX);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_GF, 4), 0);
}
END_TEST

START_TEST(test_features_refused)
{
	cfg_wr(PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	status(VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	/* Not VERSION_1: FEATURES_OK stays clear. */
	common_wr(VIRTIO_PCI_COMMON_GFSELECT, 4, 0);
	common_wr(VIRTIO_PCI_COMMON_GF, 4, 1u << VIRTIO_RING_F_EVENT_IDX);
	status(VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
	       VIRTIO_CONFIG_S_FEATURES_OK);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_STATUS, 1) &
			  VIRTIO_CONFIG_S_FEATURES_OK, 0);
	/* One we did not offer. */
	common_wr(VIRTIO_PCI_COMMON_GFSELECT, 4, 1);
	common_wr(VIRTIO_PCI_COMMON_GF, 4, 1 | 1u << 2);
	status(VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
	       VIRTIO_CONFIG_S_FEATURES_OK);
	ck_assert_uint_eq(common_rd(VIRTIO_PCI_COMMON_STATUS, 1) &
			  VIRTIO_CONFIG_S_FEATURES_OK, 0);
	/* DRIVER_OK without FEATURES_OK: NEEDS_RESET, device not started. */
	status(VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
	       VIRTIO_CONFIG_S_DRIVER_OK);
	ck_assert(common_rd(VIRTIO_PCI_COMMON_STATUS, 1) &
		  VIRTIO_CONFIG_S_NEEDS_RESET);
	ck_assert_uint_eq(activated, 0);
}
END_TEST

START_TEST(test_device_config)
{
	cfg_wr(PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_DEVICE_OFF + 4, 4), 0x44444444);
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_DEVICE_OFF + 23, 1), 0x40 + 23);
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_DEVICE_OFF + 22, 4), 0);
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_DEVICE_OFF + 24, 1), 0);
	/* ISR: one byte at its offset only; beyond the regions: 0. */
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_ISR_OFF, 4), 0);
	ck_assert_uint_eq(bar_rd(VIRTIO_PCI_ISR_OFF + 1, 1), 0);
	ck_assert_uint_eq(bar_rd(0x7000, 4), 0);
}
END_TEST

static const struct {
	const char *what;
	unsigned int nq;
	uint16_t qmax;
	uint32_t config_size, bar;
} bad_dev[] = {
	{ "no queue", 0, QMAX, 24, BAR_ADDR },
	{ "queue max not a power of two", 1, 12, 24, BAR_ADDR },
	{ "queue max too big", 1, VIRTQ_MAX_SIZE * 2, 24, BAR_ADDR },
	{ "more vectors than the table region", 256, QMAX, 24, BAR_ADDR },
	{ "config space too big", 1, QMAX, VIRTIO_PCI_REGION_SIZE + 1,
	  BAR_ADDR },
	{ "misaligned BAR", 1, QMAX, 24, BAR_ADDR + 0x1000 },
	{ "no BAR address", 1, QMAX, 24, 0 },
};

START_TEST(test_bad_device)
{
	struct virtq_mem mem = { .translate = gtranslate };
	struct virtio_dev d = vdev;

	d.num_queues = bad_dev[_i].nq;
	d.queue_max = bad_dev[_i].qmax;
	d.config_size = bad_dev[_i].config_size;
	ck_assert_msg(!virtio_pci__create(&d, &mem, bad_dev[_i].bar, send_msi,
					  NULL), "%s: accepted",
		      bad_dev[_i].what);
}
END_TEST

static Suite *virtio_pci_suite(void)
{
	Suite *s = suite_create("virtio_pci");
	TCase *tc = tcase_create("transport");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_identity);
	tcase_add_test(tc, test_bar_off);
	tcase_add_test(tc, test_common_fields);
	tcase_add_loop_test(tc, test_common_bad_access, 0,
			    sizeof(bad_access) / sizeof(bad_access[0]));
	tcase_add_test(tc, test_vectors);
	tcase_add_test(tc, test_notify);
	tcase_add_loop_test(tc, test_bad_queue_setup, 0,
			    sizeof(bad_queue) / sizeof(bad_queue[0]));
	tcase_add_test(tc, test_queue_frozen);
	tcase_add_test(tc, test_features_refused);
	tcase_add_test(tc, test_device_config);
	tcase_add_loop_test(tc, test_bad_device, 0,
			    sizeof(bad_dev) / sizeof(bad_dev[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("msi-x");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_per_queue_msi);
	tcase_add_test(tc, test_msix_masking);
	tcase_add_test(tc, test_msix_bad_address);
	tcase_add_loop_test(tc, test_msix_table_bad_access, 0,
			    sizeof(bad_table) / sizeof(bad_table[0]));
	tcase_add_test(tc, test_msix_table_qword);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(virtio_pci_suite());
}
