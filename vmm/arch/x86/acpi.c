// SPDX-License-Identifier: GPL-2.0-only
/*
 * ACPI tables, laid out as ACPI 6.3 describes them.
 *
 * Why a full FADT rather than a hardware-reduced one: Linux drops the
 * legacy PIC and PIT on a hardware-reduced platform, and our boot relies
 * on both.  A full FADT in turn requires a FACS and the PM1a event and
 * control blocks, which devices/acpi_pm.c emulates; S5 is the only sleep
 * state offered, so a guest "poweroff" ends the VM.
 *
 * The tables are packed little-endian structs written straight into
 * guest memory: the VMM only runs on x86 hosts.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "acpi.h"
#include "layout.h"
#include "devices/acpi_pm.h"
#include "devices/pvpanic.h"

#define __packed		__attribute__((packed))

#define ACPI_OEM_ID		"GPIN  "
#define ACPI_OEM_TABLE_ID	"GPINVMM "
#define ACPI_OEM_REVISION	1
#define ACPI_CREATOR_ID		"GPIN"
#define ACPI_CREATOR_REVISION	1

/* Generic Address Structure address spaces and access sizes. */
#define ACPI_GAS_SYSTEM_IO	1
#define ACPI_GAS_ACCESS_BYTE	1
#define ACPI_GAS_ACCESS_WORD	2

/* FADT Flags (ACPI 6.3, table 5-34). */
#define FADT_F_WBINVD		(1u << 0)
#define FADT_F_PROC_C1		(1u << 2)
#define FADT_F_PWR_BUTTON	(1u << 4)	/* no fixed-feature button */
#define FADT_F_SLP_BUTTON	(1u << 5)	/* no fixed-feature button */
#define FADT_F_RESET_REG_SUP	(1u << 10)
#define FADT_F_HW_REDUCED	(1u << 20)

/* FADT IA-PC boot architecture flags (table 5-35). */
#define FADT_BOOT_LEGACY_DEVICES (1u << 0)
#define FADT_BOOT_NO_VGA	(1u << 2)

/* P_LVL2_LAT above 100 and P_LVL3_LAT above 1000 mean "no C2 / C3". */
#define FADT_NO_C2_LAT		0x0fff
#define FADT_NO_C3_LAT		0x0fff

/* CMOS index of the century byte devices/rtc.c keeps. */
#define FADT_CENTURY_CMOS	0x32

/* The i8042's pulse-reset command, which devices/i8042.c acts on. */
#define ACPI_RESET_VALUE	0xfe

/* MADT flags and entry types (section 5.2.12). */
#define MADT_PCAT_COMPAT	(1u << 0)
#define MADT_LAPIC		0
#define MADT_IOAPIC		1
#define MADT_INT_OVERRIDE	2
#define MADT_LAPIC_NMI		4
#define MADT_LAPIC_ENABLED	(1u << 0)
#define MADT_ALL_CPUS		0xff

/* MPS INTI flags: polarity in bits 1:0, trigger mode in bits 3:2. */
#define MPS_INTI_ACTIVE_HIGH	0x1
#define MPS_INTI_EDGE		(0x1 << 2)
#define MPS_INTI_LEVEL		(0x3 << 2)

struct acpi_table_header {
	char signature[4];
	uint32_t length;		/* of the whole table, header included */
	uint8_t revision;
	uint8_t checksum;		/* all bytes of the table sum to 0 */
	char oem_id[6];
	char oem_table_id[8];
	uint32_t oem_revision;
	char creator_id[4];
	uint32_t creator_revision;
} __packed;

struct acpi_gas {
	uint8_t space_id;
	uint8_t bit_width;
	uint8_t bit_offset;
	uint8_t access_size;
	uint64_t address;
} __packed;

struct acpi_rsdp {
	char signature[8];
	uint8_t checksum;		/* of the first 20 bytes (ACPI 1.0 part) */
	char oem_id[6];
	uint8_t revision;		/* 2: ACPI 2.0+, XSDT present */
	uint32_t rsdt_address;
	uint32_t length;
	uint64_t xsdt_address;
	uint8_t ext_checksum;		/* of all 36 bytes */
	uint8_t reserved[3];
} __packed;

struct acpi_fadt {
	struct acpi_table_header header;
	uint32_t firmware_ctrl;
	uint32_t dsdt;
	uint8_t reserved0;
	uint8_t preferred_pm_profile;
	uint16_t sci_int;
	uint32_t smi_cmd;
	uint8_t acpi_enable;
	uint8_t acpi_disable;
	uint8_t s4bios_req;
	uint8_t pstate_cnt;
	uint32_t pm1a_evt_blk;
	uint32_t pm1b_evt_blk;
	uint32_t pm1a_cnt_blk;
	uint32_t pm1b_cnt_blk;
	uint32_t pm2_cnt_blk;
	uint32_t pm_tmr_blk;
	uint32_t gpe0_blk;
	uint32_t gpe1_blk;
	uint8_t pm1_evt_len;
	uint8_t pm1_cnt_len;
	uint8_t pm2_cnt_len;
	uint8_t pm_tmr_len;
	uint8_t gpe0_blk_len;
	uint8_t gpe1_blk_len;
	uint8_t gpe1_base;
	uint8_t cst_cnt;
	uint16_t p_lvl2_lat;
	uint16_t p_lvl3_lat;
	uint16_t flush_size;
	uint16_t flush_stride;
	uint8_t duty_offset;
	uint8_t duty_width;
	uint8_t day_alrm;
	uint8_t mon_alrm;
	uint8_t century;
	uint16_t iapc_boot_arch;
	uint8_t reserved1;
	uint32_t flags;
	struct acpi_gas reset_reg;
	uint8_t reset_value;
	uint16_t arm_boot_arch;
	uint8_t minor_version;
	uint64_t x_firmware_ctrl;
	uint64_t x_dsdt;
	struct acpi_gas x_pm1a_evt_blk;
	struct acpi_gas x_pm1b_evt_blk;
	struct acpi_gas x_pm1a_cnt_blk;
	struct acpi_gas x_pm1b_cnt_blk;
	struct acpi_gas x_pm2_cnt_blk;
	struct acpi_gas x_pm_tmr_blk;
	struct acpi_gas x_gpe0_blk;
	struct acpi_gas x_gpe1_blk;
	struct acpi_gas sleep_control_reg;
	struct acpi_gas sleep_status_reg;
	uint64_t hypervisor_vendor_id;
} __packed;

struct acpi_facs {
	char signature[4];
	uint32_t length;
	uint32_t hardware_signature;
	uint32_t firmware_waking_vector;
	uint32_t global_lock;
	uint32_t flags;
	uint64_t x_firmware_waking_vector;
	uint8_t version;
	uint8_t reserved0[3];
	uint32_t ospm_flags;
	uint8_t reserved1[24];
} __packed;

struct acpi_madt {
	struct acpi_table_header header;
	uint32_t lapic_address;
	uint32_t flags;
} __packed;

struct madt_lapic {
	uint8_t type;
	uint8_t length;
	uint8_t processor_uid;
	uint8_t apic_id;
	uint32_t flags;
} __packed;

struct madt_ioapic {
	uint8_t type;
	uint8_t length;
	uint8_t ioapic_id;
	uint8_t reserved;
	uint32_t address;
	uint32_t gsi_base;
} __packed;

struct madt_int_override {
	uint8_t type;
	uint8_t length;
	uint8_t bus;			/* 0: ISA */
	uint8_t source;			/* ISA IRQ */
	uint32_t gsi;
	uint16_t flags;			/* MPS INTI */
} __packed;

struct madt_lapic_nmi {
	uint8_t type;
	uint8_t length;
	uint8_t processor_uid;
	uint16_t flags;			/* MPS INTI */
	uint8_t lint;
} __packed;

/* Offsets the specification fixes; a wrong field type would move them. */
_Static_assert(sizeof(struct acpi_table_header) == 36, "ACPI header");
_Static_assert(sizeof(struct acpi_gas) == 12, "GAS");
_Static_assert(sizeof(struct acpi_rsdp) == 36, "RSDP");
_Static_assert(offsetof(struct acpi_fadt, sci_int) == 46, "FADT SCI_INT");
_Static_assert(offsetof(struct acpi_fadt, pm1_evt_len) == 88, "FADT PM1_EVT_LEN");
_Static_assert(offsetof(struct acpi_fadt, iapc_boot_arch) == 109, "FADT IAPC");
_Static_assert(offsetof(struct acpi_fadt, reset_reg) == 116, "FADT RESET_REG");
_Static_assert(offsetof(struct acpi_fadt, x_firmware_ctrl) == 132, "FADT X_FACS");
_Static_assert(offsetof(struct acpi_fadt, sleep_control_reg) == 244, "FADT SLEEP");
_Static_assert(sizeof(struct acpi_fadt) == 276, "FADT (ACPI 6.x)");
_Static_assert(sizeof(struct acpi_facs) == 64, "FACS");
_Static_assert(sizeof(struct madt_lapic) == 8, "MADT LAPIC");
_Static_assert(sizeof(struct madt_ioapic) == 12, "MADT IOAPIC");
_Static_assert(sizeof(struct madt_int_override) == 10, "MADT ISO");
_Static_assert(sizeof(struct madt_lapic_nmi) == 6, "MADT LAPIC NMI");
_Static_assert(ACPI_RSDP_START % 16 == 0, "the RSDP scan looks at 16-byte boundaries");
_Static_assert(ACPI_RSDP_START + sizeof(struct acpi_rsdp) <= ACPI_TABLES_START,
	       "RSDP overlaps the tables");
_Static_assert(ACPI_TABLES_END <= SZ_4G, "RSDT holds 32-bit addresses");
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

/* A bump allocator over the table area; the area starts out zeroed. */
struct acpi_builder {
	uint8_t *mem;		/* host view of guest-physical 0 */
	uint64_t next;		/* first free guest-physical byte */
	uint64_t end;
};

static void *acpi_alloc(struct acpi_builder *b, uint64_t size, uint64_t align,
			uint64_t *gpa)
{
	uint64_t start = (b->next + align - 1) & ~(align - 1);

	if (start > b->end || size > b->end - start)
		return NULL;
	b->next = start + size;
	*gpa = start;
	return b->mem + start;
}

static uint8_t acpi_checksum(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint8_t sum = 0;

	while (len--)
		sum += *p++;
	return (uint8_t)-sum;
}

static void acpi_header_init(struct acpi_table_header *h, const char *sig,
			     uint32_t length, uint8_t revision)
{
	memcpy(h->signature, sig, sizeof(h->signature));
	h->length = length;
	h->revision = revision;
	memcpy(h->oem_id, ACPI_OEM_ID, sizeof(h->oem_id));
	memcpy(h->oem_table_id, ACPI_OEM_TABLE_ID, sizeof(h->oem_table_id));
	h->oem_revision = ACPI_OEM_REVISION;
	memcpy(h->creator_id, ACPI_CREATOR_ID, sizeof(h->creator_id));
	h->creator_revision = ACPI_CREATOR_REVISION;
}

/* Last step of every table: nothing may change after the checksum. */
static void acpi_header_seal(struct acpi_table_header *h)
{
	h->checksum = 0;
	h->checksum = acpi_checksum(h, h->length);
}

static struct acpi_gas acpi_gas_io(uint16_t port, uint8_t bytes,
				   uint8_t access_size)
{
	return (struct acpi_gas) {
		.space_id = ACPI_GAS_SYSTEM_IO,
		.bit_width = bytes * 8,
		.access_size = access_size,
		.address = port,
	};
}

static int acpi_build_dsdt(struct acpi_builder *b,
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
	h = acpi_alloc(b, len, 16, gpa);
	if (!h)
		return -ENOSPC;
	/* Revision 2: integers in the AML are 64 bits wide. */
	acpi_header_init(h, "DSDT", len, 2);
	memcpy(h + 1, body.buf, body.len);
	acpi_header_seal(h);
	return 0;
}

/*
 * The FACS only exists because a non-reduced FADT must point at one; we
 * offer no S3/S4 (no waking vector) and no global lock.  It has no
 * checksum, and the specification wants it 64-byte aligned.
 */
static int acpi_build_facs(struct acpi_builder *b, uint64_t *gpa)
{
	struct acpi_facs *facs = acpi_alloc(b, sizeof(*facs), 64, gpa);

	if (!facs)
		return -ENOSPC;
	memcpy(facs->signature, "FACS", sizeof(facs->signature));
	facs->length = sizeof(*facs);
	facs->version = 2;
	return 0;
}

/*
 * What Linux 6.1 does with each field that matters:
 *  - SMI_CMD = 0: ACPICA takes the machine to be in ACPI mode already and
 *    never tries to switch it (acpi_hw_get_mode()).
 *  - IAPC_BOOT_ARCH.8042 clear: a revision >= 2 FADT without it makes
 *    Linux mark the i8042 "firmware absent" (acpi_parse_fadt()), so the
 *    i8042 driver does not probe ports 0x60/0x64.  devices/i8042.c only
 *    knows the reset command; a probe would wait out its self-test
 *    timeouts (seconds of boot time) to learn there is no keyboard.
 *    NO_VGA is simply true; CENTURY names devices/rtc.c's century byte.
 *  - RESET_REG_SUP with an I/O reset register: acpi_reboot(), the first
 *    method of the default reboot=acpi order, writes RESET_VALUE to it.
 *    Port 0x64 value 0xfe is the i8042 pulse-reset, the same write the
 *    next method (reboot=kbd) makes, so either way the VMM sees one reset.
 *  - No PM timer: optional since ACPI 5.0A; Linux then uses other
 *    clocksources.  No GPE blocks: we have no general-purpose events.
 *  - PWR_BUTTON/SLP_BUTTON set: no fixed-feature buttons for Linux to
 *    enable, since we never raise their status bits.
 * FIRMWARE_CTRL is set and X_FIRMWARE_CTRL left 0: the specification
 * wants only one of them non-zero.  X_DSDT and the X_ blocks mirror the
 * 32-bit fields exactly, so ACPICA finds no 32/64 mismatch to warn about.
 */
static int acpi_build_fadt(struct acpi_builder *b, uint64_t dsdt,
			   uint64_t facs, uint64_t *gpa)
{
	struct acpi_fadt *fadt = acpi_alloc(b, sizeof(*fadt), 16, gpa);

	if (!fadt)
		return -ENOSPC;
	acpi_header_init(&fadt->header, "FACP", sizeof(*fadt), 6);
	fadt->minor_version = 3;
	fadt->firmware_ctrl = facs;
	fadt->dsdt = dsdt;
	fadt->x_dsdt = dsdt;
	fadt->sci_int = IRQ_ACPI_SCI;
	fadt->smi_cmd = 0;

	fadt->pm1a_evt_blk = PORT_ACPI_PM1A_EVT;
	fadt->pm1_evt_len = ACPI_PM1_EVT_LEN;
	fadt->x_pm1a_evt_blk = acpi_gas_io(PORT_ACPI_PM1A_EVT, ACPI_PM1_EVT_LEN,
					   ACPI_GAS_ACCESS_WORD);
	fadt->pm1a_cnt_blk = PORT_ACPI_PM1A_CNT;
	fadt->pm1_cnt_len = ACPI_PM1_CNT_LEN;
	fadt->x_pm1a_cnt_blk = acpi_gas_io(PORT_ACPI_PM1A_CNT, ACPI_PM1_CNT_LEN,
					   ACPI_GAS_ACCESS_WORD);

	fadt->p_lvl2_lat = FADT_NO_C2_LAT;
	fadt->p_lvl3_lat = FADT_NO_C3_LAT;
	fadt->century = FADT_CENTURY_CMOS;
	fadt->iapc_boot_arch = FADT_BOOT_LEGACY_DEVICES | FADT_BOOT_NO_VGA;
	fadt->flags = FADT_F_WBINVD | FADT_F_PROC_C1 | FADT_F_PWR_BUTTON |
		      FADT_F_SLP_BUTTON | FADT_F_RESET_REG_SUP;
	fadt->reset_reg = acpi_gas_io(PORT_I8042_CMD, 1, ACPI_GAS_ACCESS_BYTE);
	fadt->reset_value = ACPI_RESET_VALUE;

	acpi_header_seal(&fadt->header);
	return 0;
}

/* MADT entries are packed back to back, so each is copied into place. */
static uint8_t *madt_put(uint8_t *p, const void *entry, size_t len)
{
	memcpy(p, entry, len);
	return p + len;
}

#define MADT_PUT(p, type, ...)						\
	madt_put(p, &(struct type) { __VA_ARGS__ }, sizeof(struct type))

/*
 * One enabled local APIC per vCPU (UID = APIC id = index, the ids KVM
 * gives vCPUs by default), the in-kernel IOAPIC with GSIs 0-23, and two
 * overrides:
 *  - IRQ0 -> GSI2: KVM routes the in-kernel PIT's GSI 0 to IOAPIC pin 2,
 *    as on a real PC chipset.
 *  - IRQ9 -> GSI9 level, active high: without an override Linux assumes
 *    the SCI is level, active low; KVM's lines are active high.
 * The IOAPIC id follows the APIC ids so the two never clash.
 */
static int acpi_build_madt(struct acpi_builder *b, unsigned int ncpus,
			   uint64_t *gpa)
{
	uint32_t len = sizeof(struct acpi_madt) +
		       ncpus * sizeof(struct madt_lapic) +
		       sizeof(struct madt_ioapic) +
		       2 * sizeof(struct madt_int_override) +
		       sizeof(struct madt_lapic_nmi);
	struct acpi_madt *madt = acpi_alloc(b, len, 16, gpa);
	uint8_t *p;
	unsigned int cpu;

	if (!madt)
		return -ENOSPC;
	/* Revision 5 (ACPI 6.3); every LAPIC is enabled, so Online Capable is moot. */
	acpi_header_init(&madt->header, "APIC", len, 5);
	madt->lapic_address = LAPIC_START;
	madt->flags = MADT_PCAT_COMPAT;

	p = (uint8_t *)(madt + 1);
	for (cpu = 0; cpu < ncpus; cpu++)
		p = MADT_PUT(p, madt_lapic, .type = MADT_LAPIC,
			     .length = sizeof(struct madt_lapic),
			     .processor_uid = cpu, .apic_id = cpu,
			     .flags = MADT_LAPIC_ENABLED);
	p = MADT_PUT(p, madt_ioapic, .type = MADT_IOAPIC,
		     .length = sizeof(struct madt_ioapic),
		     .ioapic_id = ncpus, .address = IOAPIC_START,
		     .gsi_base = 0);
	p = MADT_PUT(p, madt_int_override, .type = MADT_INT_OVERRIDE,
		     .length = sizeof(struct madt_int_override),
		     .bus = 0, .source = 0, .gsi = PIT_IOAPIC_PIN,
		     .flags = MPS_INTI_EDGE | MPS_INTI_ACTIVE_HIGH);
	p = MADT_PUT(p, madt_int_override, .type = MADT_INT_OVERRIDE,
		     .length = sizeof(struct madt_int_override),
		     .bus = 0, .source = IRQ_ACPI_SCI, .gsi = IRQ_ACPI_SCI,
		     .flags = MPS_INTI_LEVEL | MPS_INTI_ACTIVE_HIGH);
	/* Linux wires LINT1 as NMI anyway, but says so if this disagrees. */
	p = MADT_PUT(p, madt_lapic_nmi, .type = MADT_LAPIC_NMI,
		     .length = sizeof(struct madt_lapic_nmi),
		     .processor_uid = MADT_ALL_CPUS,
		     .flags = 0,		/* conforms to the bus */
		     .lint = 1);

	acpi_header_seal(&madt->header);
	return 0;
}

/*
 * The XSDT and RSDT list the same tables; only the entry width differs.
 * The entries are not naturally aligned after the 36-byte header, so
 * each one is copied in (little-endian host, so the low bytes first).
 */
static int acpi_build_sdt(struct acpi_builder *b, const char *sig,
			  size_t entry_size, const uint64_t *tables,
			  unsigned int n, uint64_t *gpa)
{
	uint32_t len = sizeof(struct acpi_table_header) + n * entry_size;
	struct acpi_table_header *h = acpi_alloc(b, len, 16, gpa);
	uint8_t *entries;
	unsigned int i;

	if (!h)
		return -ENOSPC;
	acpi_header_init(h, sig, len, 1);
	entries = (uint8_t *)(h + 1);
	for (i = 0; i < n; i++)
		memcpy(entries + i * entry_size, &tables[i], entry_size);
	acpi_header_seal(h);
	return 0;
}

static void acpi_build_rsdp(uint8_t *mem, uint64_t rsdt, uint64_t xsdt)
{
	struct acpi_rsdp *rsdp = (struct acpi_rsdp *)(mem + ACPI_RSDP_START);

	memcpy(rsdp->signature, "RSD PTR ", sizeof(rsdp->signature));
	memcpy(rsdp->oem_id, ACPI_OEM_ID, sizeof(rsdp->oem_id));
	rsdp->revision = 2;
	rsdp->rsdt_address = rsdt;
	rsdp->length = sizeof(*rsdp);
	rsdp->xsdt_address = xsdt;
	rsdp->checksum = acpi_checksum(rsdp, offsetof(struct acpi_rsdp, length));
	rsdp->ext_checksum = acpi_checksum(rsdp, sizeof(*rsdp));
}

/* Tables the XSDT and RSDT list; the DSDT and FACS hang off the FADT. */
enum { SDT_FADT, SDT_MADT, SDT_COUNT };

static int acpi_build_tables(struct acpi_builder *b, unsigned int ncpus,
			     const struct acpi_pci_host *pci,
			     const struct acpi_virtio_mmio *virtio,
			     unsigned int nvirtio, uint64_t *rsdt, uint64_t *xsdt)
{
	uint64_t dsdt, facs, sdt[SDT_COUNT];
	int ret;

	ret = acpi_build_dsdt(b, pci, virtio, nvirtio, &dsdt);
	if (!ret)
		ret = acpi_build_facs(b, &facs);
	if (!ret)
		ret = acpi_build_fadt(b, dsdt, facs, &sdt[SDT_FADT]);
	if (!ret)
		ret = acpi_build_madt(b, ncpus, &sdt[SDT_MADT]);
	if (!ret)
		ret = acpi_build_sdt(b, "XSDT", sizeof(uint64_t), sdt,
				     SDT_COUNT, xsdt);
	if (!ret)
		ret = acpi_build_sdt(b, "RSDT", sizeof(uint32_t), sdt,
				     SDT_COUNT, rsdt);
	return ret;
}

static bool virtio_ok(const struct acpi_virtio_mmio *virtio,
		      unsigned int nvirtio)
{
	unsigned int i;

	if (nvirtio > ACPI_MAX_VIRTIO || (nvirtio && !virtio))
		return false;
	for (i = 0; i < nvirtio; i++)
		if (!virtio[i].size || virtio[i].base >= SZ_4G ||
		    virtio[i].size > SZ_4G - virtio[i].base ||
		    virtio[i].gsi >= IOAPIC_PINS)
			return false;
	return true;
}

static bool pci_ok(const struct acpi_pci_host *pci)
{
	return !pci || (pci->mmio_size &&
			pci->mmio_size <= SZ_4G - pci->mmio_base);
}

int acpi__build(void *lowmem, size_t lowmem_size, unsigned int ncpus,
		const struct acpi_pci_host *pci,
		const struct acpi_virtio_mmio *virtio, unsigned int nvirtio)
{
	struct acpi_builder b = {
		.mem = lowmem,
		.next = ACPI_TABLES_START,
		.end = ACPI_TABLES_END,
	};
	uint64_t rsdt, xsdt;
	int ret;

	if (!lowmem || lowmem_size < ACPI_TABLES_END)
		return -EINVAL;
	if (ncpus == 0 || ncpus > ACPI_MAX_CPUS)
		return -EINVAL;
	if (!virtio_ok(virtio, nvirtio) || !pci_ok(pci))
		return -EINVAL;

	/* Whatever was there before must not look like a table or an RSDP. */
	memset(b.mem + ACPI_RSDP_START, 0, ACPI_TABLES_END - ACPI_RSDP_START);
	ret = acpi_build_tables(&b, ncpus, pci, virtio, nvirtio, &rsdt, &xsdt);
	if (ret)
		return ret;
	/* Last, so a failed build leaves nothing for the guest to find. */
	acpi_build_rsdp(b.mem, rsdt, xsdt);
	return 0;
}

uint64_t acpi__rsdp_addr(void)
{
	return ACPI_RSDP_START;
}
