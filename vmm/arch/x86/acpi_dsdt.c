// SPDX-License-Identifier: GPL-2.0-only
/*
 * The DSDT: \_S5, and in \_SB the pvpanic device, the PCI host bridge and
 * the virtio-mmio devices, as AML built here.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "acpi_table.h"
#include "layout.h"
#include "devices/acpi_pm.h"
#include "devices/pvpanic.h"

_Static_assert(PORT_PVPANIC <= 0xffff, "pvpanic port in a 16-bit IO descriptor");

/* AML opcodes and prefixes used below (ACPI 6.3, section 20). */
#define AML_ZERO_OP		0x00
#define AML_DWORD_PREFIX	0x0c
#define AML_NAME_OP		0x08
#define AML_BYTE_PREFIX		0x0a
#define AML_STRING_PREFIX	0x0d
#define AML_SCOPE_OP		0x10
#define AML_BUFFER_OP		0x11
#define AML_PACKAGE_OP		0x12
#define AML_EXT_OP_PREFIX	0x5b
#define AML_DEVICE_OP		0x82	/* after AML_EXT_OP_PREFIX */
#define AML_ROOT_CHAR		'\\'

/* Small resource descriptors (section 6.4.2). */
#define ACPI_RES_IO_PORT	0x47	/* type 0x08, 7 bytes follow */
#define ACPI_RES_IO_DECODE16	0x01
#define ACPI_RES_END_TAG	0x79	/* type 0x0f, 1 byte follows */

/*
 * The DSDT body.  The fixed parts are hand-assembled; the \_SB scope
 * around them and the virtio devices are built by aml_*() below, since
 * their length depends on how many devices there are.  In ASL:
 *
 *	Name (_S5, Package () { 5, 5, 0, 0 })
 *	Scope (\_SB) {
 *		Device (PEVT) {
 *			Name (_HID, "QEMU0001")
 *			Name (_STA, 0x0F)
 *			Name (_CRS, ResourceTemplate () {
 *				IO (Decode16, 0x505, 0x505, 1, 1)
 *			})
 *		}
 *		Device (PCI0) {			// with PCI devices only
 *			Name (_HID, EisaId ("PNP0A03"))
 *			Name (_UID, 0)
 *			Name (_CRS, ResourceTemplate () {
 *				WordBusNumber (ResourceProducer, MinFixed,
 *					       MaxFixed, PosDecode, 0, 0, 0,
 *					       0, 1)
 *				IO (Decode16, 0xcf8, 0xcf8, 1, 8)
 *				DWordMemory (ResourceProducer, PosDecode,
 *					     MinFixed, MaxFixed, NonCacheable,
 *					     ReadWrite, 0, base, base+size-1,
 *					     0, size)
 *			})
 *		}
 *		Device (VR00) {			// one per virtio-mmio device
 *			Name (_HID, "LNRO0005")
 *			Name (_UID, 0)
 *			Name (_CRS, ResourceTemplate () {
 *				Memory32Fixed (ReadWrite, base, size)
 *				Interrupt (ResourceConsumer, Level, ActiveHigh,
 *					   Exclusive) { gsi }
 *			})
 *		}
 *	}
 */
static const uint8_t dsdt_s5[] = {
	/*
	 * \_S5: Linux reads SLP_TYPa and SLP_TYPb from the first two elements
	 * and writes SLP_TYPa to PM1a_CNT; its presence is also what makes
	 * Linux register ACPI poweroff at all.
	 */
	AML_NAME_OP, '_', 'S', '5', '_',
	AML_PACKAGE_OP,
	0x08,					/* PkgLength: 8 bytes */
	0x04,					/* NumElements */
	AML_BYTE_PREFIX, ACPI_S5_SLP_TYP,	/* SLP_TYPa */
	AML_BYTE_PREFIX, ACPI_S5_SLP_TYP,	/* SLP_TYPb (no PM1b) */
	AML_ZERO_OP,				/* reserved */
	AML_ZERO_OP,				/* reserved */
};

static const uint8_t dsdt_pvpanic[] = {
	/*
	 * pvpanic.  Its _HID is not a PNP id, so Linux makes it a platform
	 * device with the _CRS resources, which pvpanic-mmio then maps.
	 */
	AML_EXT_OP_PREFIX, AML_DEVICE_OP,
	0x2e,					/* PkgLength: 46 bytes */
	'P', 'E', 'V', 'T',

	AML_NAME_OP, '_', 'H', 'I', 'D',
	AML_STRING_PREFIX, 'Q', 'E', 'M', 'U', '0', '0', '0', '1', 0x00,

	/* Present, enabled, shown in UI, functioning. */
	AML_NAME_OP, '_', 'S', 'T', 'A',
	AML_BYTE_PREFIX, 0x0f,

	AML_NAME_OP, '_', 'C', 'R', 'S',
	AML_BUFFER_OP,
	0x0d,					/* PkgLength: 13 bytes */
	AML_BYTE_PREFIX, 0x0a,			/* BufferSize: 10 */
	ACPI_RES_IO_PORT, ACPI_RES_IO_DECODE16,
	PORT_PVPANIC & 0xff, PORT_PVPANIC >> 8,	/* range minimum */
	PORT_PVPANIC & 0xff, PORT_PVPANIC >> 8,	/* range maximum */
	0x01,					/* alignment */
	PVPANIC_LEN,				/* length */
	ACPI_RES_END_TAG, 0x00,			/* checksum 0: not checked */
};

/* Room for the DSDT body: PCI0 and ACPI_MAX_VIRTIO devices (~70 bytes each). */
#define DSDT_BODY_MAX		4096

/* An AML byte stream being built; @overflow makes every later put a no-op. */
struct aml {
	uint8_t buf[DSDT_BODY_MAX];
	size_t len;
	bool overflow;
};

static void aml_put(struct aml *a, const void *data, size_t n)
{
	if (a->overflow || n > sizeof(a->buf) - a->len) {
		a->overflow = true;
		return;
	}
	memcpy(a->buf + a->len, data, n);
	a->len += n;
}

static void aml_byte(struct aml *a, uint8_t b)
{
	aml_put(a, &b, 1);
}

static void aml_u32(struct aml *a, uint32_t v)
{
	uint8_t le[4] = { v, v >> 8, v >> 16, v >> 24 };

	aml_put(a, le, sizeof(le));
}

/*
 * A PkgLength counts itself and what follows up to the end of its object,
 * and takes 1 to 4 bytes (section 20.2.4), so it is written last: open
 * remembers where it goes, close slides the contents up to make room.
 */
static size_t aml_open(struct aml *a)
{
	return a->len;
}

static void aml_close(struct aml *a, size_t start)
{
	size_t content = a->len - start, total;
	unsigned int n, i;
	uint8_t enc[4];

	for (n = 1; n <= 4; n++) {
		total = content + n;
		if (total < (n == 1 ? 0x40ULL : 1ULL << (4 + 8 * (n - 1))))
			break;
	}
	if (n > 4 || a->overflow || n > sizeof(a->buf) - a->len) {
		a->overflow = true;
		return;
	}
	if (n == 1) {
		enc[0] = total;
	} else {
		enc[0] = (n - 1) << 6 | (total & 0x0f);
		for (i = 1; i < n; i++)
			enc[i] = total >> (4 + 8 * (i - 1));
	}
	memmove(a->buf + start + n, a->buf + start, content);
	memcpy(a->buf + start, enc, n);
	a->len += n;
}

static void aml_name_seg(struct aml *a, const char name[4])
{
	aml_put(a, name, 4);
}

/* Large resource descriptors (section 6.4.3). */
#define ACPI_RES_MEM32_FIXED	0x86
#define ACPI_RES_EXT_IRQ	0x89
#define ACPI_RES_MEM_RW		0x01
/* Extended IRQ flags: consumer; level, active-high and exclusive are 0. */
#define ACPI_RES_IRQ_CONSUMER	0x01

static void aml_virtio_mmio(struct aml *a, unsigned int uid,
			    const struct acpi_virtio_mmio *v)
{
	static const char hex[] = "0123456789ABCDEF";
	char name[4] = { 'V', 'R', hex[(uid >> 4) & 0xf], hex[uid & 0xf] };
	size_t dev, buf;

	aml_byte(a, AML_EXT_OP_PREFIX);
	aml_byte(a, AML_DEVICE_OP);
	dev = aml_open(a);
	aml_name_seg(a, name);

	aml_byte(a, AML_NAME_OP);
	aml_name_seg(a, "_HID");
	aml_byte(a, AML_STRING_PREFIX);
	aml_put(a, "LNRO0005", 9);		/* with its NUL */

	aml_byte(a, AML_NAME_OP);
	aml_name_seg(a, "_UID");
	aml_byte(a, AML_BYTE_PREFIX);
	aml_byte(a, uid);

	aml_byte(a, AML_NAME_OP);
	aml_name_seg(a, "_CRS");
	aml_byte(a, AML_BUFFER_OP);
	buf = aml_open(a);
	aml_byte(a, AML_BYTE_PREFIX);
	aml_byte(a, 12 + 9 + 2);		/* BufferSize */
	aml_byte(a, ACPI_RES_MEM32_FIXED);
	aml_byte(a, 9);				/* length, u16 */
	aml_byte(a, 0);
	aml_byte(a, ACPI_RES_MEM_RW);
	aml_u32(a, v->base);
	aml_u32(a, v->size);
	aml_byte(a, ACPI_RES_EXT_IRQ);
	aml_byte(a, 6);				/* length, u16 */
	aml_byte(a, 0);
	aml_byte(a, ACPI_RES_IRQ_CONSUMER);
	aml_byte(a, 1);				/* one interrupt */
	aml_u32(a, v->gsi);
	aml_byte(a, ACPI_RES_END_TAG);
	aml_byte(a, 0);
	aml_close(a, buf);
	aml_close(a, dev);
}

/* Address space descriptors (section 6.4.3.5). */
#define ACPI_RES_DWORD_ADDR	0x87
#define ACPI_RES_WORD_ADDR	0x88
#define ACPI_RES_SPACE_MEM	0
#define ACPI_RES_SPACE_BUS	2
/* General flags: producer, positive decode, min and max fixed. */
#define ACPI_RES_WINDOW_FIXED	0x0c
/* EisaId ("PNP0A03"), a PCI host bridge, as AML encodes it. */
#define ACPI_PNP0A03		0x030ad041u

static void aml_u16(struct aml *a, uint16_t v)
{
	aml_byte(a, v);
	aml_byte(a, v >> 8);
}

static void aml_pci_host(struct aml *a, const struct acpi_pci_host *pci)
{
	size_t dev, buf;

	aml_byte(a, AML_EXT_OP_PREFIX);
	aml_byte(a, AML_DEVICE_OP);
	dev = aml_open(a);
	aml_name_seg(a, "PCI0");

	aml_byte(a, AML_NAME_OP);
	aml_name_seg(a, "_HID");
	aml_byte(a, AML_DWORD_PREFIX);
	aml_u32(a, ACPI_PNP0A03);

	aml_byte(a, AML_NAME_OP);
	aml_name_seg(a, "_UID");
	aml_byte(a, AML_ZERO_OP);

	aml_byte(a, AML_NAME_OP);
	aml_name_seg(a, "_CRS");
	aml_byte(a, AML_BUFFER_OP);
	buf = aml_open(a);
	aml_byte(a, AML_BYTE_PREFIX);
	aml_byte(a, 16 + 8 + 26 + 2);		/* BufferSize */
	/* Bus 0 only. */
	aml_byte(a, ACPI_RES_WORD_ADDR);
	aml_u16(a, 13);
	aml_byte(a, ACPI_RES_SPACE_BUS);
	aml_byte(a, ACPI_RES_WINDOW_FIXED);
	aml_byte(a, 0);				/* type-specific flags */
	aml_u16(a, 0);				/* granularity */
	aml_u16(a, 0);				/* minimum */
	aml_u16(a, 0);				/* maximum */
	aml_u16(a, 0);				/* translation */
	aml_u16(a, 1);				/* length */
	/* The configuration ports the bridge itself decodes. */
	aml_byte(a, ACPI_RES_IO_PORT);
	aml_byte(a, ACPI_RES_IO_DECODE16);
	aml_u16(a, PORT_PCI_CONF1);
	aml_u16(a, PORT_PCI_CONF1);
	aml_byte(a, 1);				/* alignment */
	aml_byte(a, PORT_PCI_CONF1_LEN);
	/* The BAR window: read-write, non-cacheable memory. */
	aml_byte(a, ACPI_RES_DWORD_ADDR);
	aml_u16(a, 23);
	aml_byte(a, ACPI_RES_SPACE_MEM);
	aml_byte(a, ACPI_RES_WINDOW_FIXED);
	aml_byte(a, ACPI_RES_MEM_RW);
	aml_u32(a, 0);				/* granularity */
	aml_u32(a, pci->mmio_base);
	aml_u32(a, pci->mmio_base + pci->mmio_size - 1);
	aml_u32(a, 0);				/* translation */
	aml_u32(a, pci->mmio_size);
	aml_byte(a, ACPI_RES_END_TAG);
	aml_byte(a, 0);
	aml_close(a, buf);
	aml_close(a, dev);
}

static void aml_dsdt_body(struct aml *a, const struct acpi_pci_host *pci,
			  const struct acpi_virtio_mmio *virtio,
			  unsigned int nvirtio)
{
	unsigned int i;
	size_t scope;

	aml_put(a, dsdt_s5, sizeof(dsdt_s5));
	/* Scope (\_SB): devices conventionally live on the system bus. */
	aml_byte(a, AML_SCOPE_OP);
	scope = aml_open(a);
	aml_put(a, "\\_SB_", 5);
	aml_put(a, dsdt_pvpanic, sizeof(dsdt_pvpanic));
	if (pci)
		aml_pci_host(a, pci);
	for (i = 0; i < nvirtio; i++)
		aml_virtio_mmio(a, i, &virtio[i]);
	aml_close(a, scope);
}

int acpi_dsdt__build(struct acpi_builder *b,
		     const struct acpi_pci_host *pci,
		     const struct acpi_virtio_mmio *virtio,
		     unsigned int nvirtio, uint64_t *gpa)
{
	struct aml body;	/* 4 KiB: fine on a start-up stack */
	struct acpi_table_header *h;
	uint32_t len;

	body.len = 0;
	body.overflow = false;
	aml_dsdt_body(&body, pci, virtio, nvirtio);
	if (body.overflow)
		return -ENOSPC;
	len = sizeof(struct acpi_table_header) + body.len;
	h = acpi_builder__alloc(b, len, 16, gpa);
	if (!h)
		return -ENOSPC;
	/* Revision 2: integers in the AML are 64 bits wide. */
	acpi_header__init(h, "DSDT", len, 2);
	memcpy(h + 1, body.buf, body.len);
	acpi_header__seal(h);
	return 0;
}
