// SPDX-License-Identifier: GPL-2.0-only
/*
 * ACPI table builder: the tables are parsed here from the raw bytes at the
 * offsets the ACPI specification gives, not through acpi.c's structs, so a
 * wrong struct layout shows up as a failure rather than agreeing with
 * itself.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/acpi.h"
#include "arch/x86/layout.h"

#define LOWMEM_SIZE	SZ_1M
#define POISON		0xa5

#define HDR_LEN		36

/* Where the specification (and Linux) scans for an RSDP. */
#define RSDP_SCAN_START	0xe0000
#define RSDP_SCAN_END	0x100000

static uint8_t *mem;

static void setup(void)
{
	mem = malloc(LOWMEM_SIZE);
	ck_assert_ptr_nonnull(mem);
	/* Not zeroed: the builder must not rely on clean memory. */
	memset(mem, POISON, LOWMEM_SIZE);
}

static void teardown(void)
{
	free(mem);
	mem = NULL;
}

static uint16_t rd16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

static uint32_t rd32(const uint8_t *p)
{
	return rd16(p) | (uint32_t)rd16(p + 2) << 16;
}

static uint64_t rd64(const uint8_t *p)
{
	return rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static uint8_t sum8(const uint8_t *p, size_t len)
{
	uint8_t s = 0;

	while (len--)
		s += *p++;
	return s;
}

/*
 * The table at @gpa, checked to lie inside the table area, to carry
 * @sig and to checksum to zero.
 */
static const uint8_t *table_at(uint64_t gpa, const char *sig)
{
	const uint8_t *t;
	uint32_t len;

	ck_assert_uint_ge(gpa, ACPI_TABLES_START);
	ck_assert_uint_le(gpa + HDR_LEN, ACPI_TABLES_END);
	t = mem + gpa;
	len = rd32(t + 4);
	ck_assert_uint_ge(len, HDR_LEN);
	ck_assert_uint_le(gpa + len, ACPI_TABLES_END);
	ck_assert_mem_eq(t, sig, 4);
	ck_assert_uint_eq(sum8(t, len), 0);
	ck_assert_mem_eq(t + 10, "GPIN  ", 6);
	ck_assert_mem_eq(t + 16, "GPINVMM ", 8);
	return t;
}

/* Scan the BIOS area as Linux does when boot_params has no RSDP address. */
static const uint8_t *find_rsdp(void)
{
	uint64_t a;

	for (a = RSDP_SCAN_START; a < RSDP_SCAN_END; a += 16)
		if (!memcmp(mem + a, "RSD PTR ", 8) && !sum8(mem + a, 20))
			return mem + a;
	return NULL;
}

static const uint8_t *xsdt(void)
{
	const uint8_t *rsdp = find_rsdp();

	ck_assert_ptr_nonnull(rsdp);
	return table_at(rd64(rsdp + 24), "XSDT");
}

/* The table with @sig among the XSDT's entries; fails if absent. */
static const uint8_t *find_table(const char *sig)
{
	const uint8_t *x = xsdt();
	uint32_t n = (rd32(x + 4) - HDR_LEN) / 8, i;

	for (i = 0; i < n; i++) {
		uint64_t gpa = rd64(x + HDR_LEN + 8 * i);

		if (!memcmp(mem + gpa, sig, 4))
			return table_at(gpa, sig);
	}
	ck_abort_msg("no %s in the XSDT", sig);
	return NULL;
}

static void build(unsigned int ncpus)
{
	ck_assert_int_eq(acpi__build(mem, LOWMEM_SIZE, ncpus, NULL, NULL, 0), 0);
}

START_TEST(test_rsdp_valid)
{
	const uint8_t *rsdp;

	build(1);
	rsdp = find_rsdp();
	ck_assert_ptr_nonnull(rsdp);
	ck_assert_ptr_eq(rsdp, mem + acpi__rsdp_addr());
	ck_assert_uint_eq(acpi__rsdp_addr(), ACPI_RSDP_START);
	ck_assert_uint_eq(sum8(rsdp, 20), 0);
	ck_assert_uint_eq(rsdp[15], 2);			/* revision */
	ck_assert_uint_eq(rd32(rsdp + 20), 36);		/* length */
	ck_assert_uint_eq(sum8(rsdp, 36), 0);		/* extended */
	ck_assert_mem_eq(rsdp + 9, "GPIN  ", 6);
}
END_TEST

START_TEST(test_xsdt_rsdt_agree)
{
	const uint8_t *rsdp, *x, *r;
	uint32_t n, i;

	build(2);
	rsdp = find_rsdp();
	x = table_at(rd64(rsdp + 24), "XSDT");
	r = table_at(rd32(rsdp + 16), "RSDT");
	n = (rd32(x + 4) - HDR_LEN) / 8;
	ck_assert_uint_eq(rd32(x + 4), HDR_LEN + 8 * n);
	ck_assert_uint_eq(rd32(r + 4), HDR_LEN + 4 * n);
	ck_assert_uint_eq(n, 2);
	for (i = 0; i < n; i++) {
		uint64_t gpa = rd64(x + HDR_LEN + 8 * i);

		ck_assert_uint_eq(gpa, rd32(r + HDR_LEN + 4 * i));
		/* table_at() checks the checksum whatever the signature. */
		table_at(gpa, (const char *)mem + gpa);
	}
	find_table("FACP");
	find_table("APIC");
}
END_TEST

START_TEST(test_fadt_fields)
{
	const uint8_t *f, *facs;
	uint32_t flags;

	build(4);
	f = find_table("FACP");
	ck_assert_uint_eq(rd32(f + 4), 276);		/* ACPI 6.x length */
	ck_assert_uint_ge(f[8], 5);			/* revision */
	ck_assert_uint_eq(rd16(f + 46), IRQ_ACPI_SCI);	/* SCI_INT */
	ck_assert_uint_eq(rd32(f + 48), 0);		/* SMI_CMD */
	ck_assert_uint_eq(rd32(f + 56), PORT_ACPI_PM1A_EVT);
	ck_assert_uint_eq(rd32(f + 64), PORT_ACPI_PM1A_CNT);
	ck_assert_uint_eq(rd32(f + 76), 0);		/* no PM timer */
	ck_assert_uint_eq(f[88], 4);			/* PM1_EVT_LEN */
	ck_assert_uint_eq(f[89], 2);			/* PM1_CNT_LEN */
	ck_assert_uint_eq(f[91], 0);			/* PM_TMR_LEN */

	/* IAPC_BOOT_ARCH: no 8042, so Linux does not wait out a probe. */
	ck_assert_uint_eq(rd16(f + 109) & (1u << 1), 0);

	flags = rd32(f + 112);
	ck_assert_uint_eq(flags & (1u << 20), 0);	/* not HW_REDUCED */
	ck_assert_uint_ne(flags & (1u << 10), 0);	/* RESET_REG_SUP */
	/* RESET_REG: system I/O, 8 bits, port 0x64; value 0xfe */
	ck_assert_uint_eq(f[116], 1);
	ck_assert_uint_eq(f[117], 8);
	ck_assert_uint_eq(rd64(f + 120), PORT_I8042_CMD);
	ck_assert_uint_eq(f[128], 0xfe);

	/* X_PM1a_EVT_BLK and X_PM1a_CNT_BLK match the 32-bit fields. */
	ck_assert_uint_eq(f[148], 1);
	ck_assert_uint_eq(f[149], 32);
	ck_assert_uint_eq(rd64(f + 152), PORT_ACPI_PM1A_EVT);
	ck_assert_uint_eq(f[172], 1);
	ck_assert_uint_eq(f[173], 16);
	ck_assert_uint_eq(rd64(f + 176), PORT_ACPI_PM1A_CNT);
	/* X_PM_TMR_BLK empty, like PM_TMR_BLK. */
	ck_assert_uint_eq(rd64(f + 212), 0);

	/* DSDT and X_DSDT agree. */
	ck_assert_uint_eq(rd64(f + 140), rd32(f + 40));
	table_at(rd32(f + 40), "DSDT");

	/* FACS: 64-byte aligned, 64 bytes long, no X_FIRMWARE_CTRL clash. */
	ck_assert_uint_ne(rd32(f + 36), 0);
	ck_assert_uint_eq(rd32(f + 36) % 64, 0);
	ck_assert_uint_eq(rd64(f + 132), 0);
	ck_assert_uint_ge(rd32(f + 36), ACPI_TABLES_START);
	ck_assert_uint_le(rd32(f + 36) + 64, ACPI_TABLES_END);
	facs = mem + rd32(f + 36);
	ck_assert_mem_eq(facs, "FACS", 4);
	ck_assert_uint_eq(rd32(facs + 4), 64);
}
END_TEST

static const uint8_t *dsdt(void)
{
	const uint8_t *f = find_table("FACP");

	return table_at(rd32(f + 40), "DSDT");
}

static const uint8_t *memfind(const uint8_t *hay, size_t hlen,
			      const void *needle, size_t nlen)
{
	return memmem(hay, hlen, needle, nlen);
}

START_TEST(test_dsdt_s5)
{
	/* Name (_S5_, Package (4) { 5, 5, 0, 0 }) */
	static const uint8_t s5[] = {
		0x08, '_', 'S', '5', '_', 0x12, 0x08, 0x04,
		0x0a, 0x05, 0x0a, 0x05, 0x00, 0x00,
	};
	const uint8_t *d;

	build(1);
	d = dsdt();
	ck_assert_ptr_nonnull(memfind(d + HDR_LEN, rd32(d + 4) - HDR_LEN,
				      s5, sizeof(s5)));
}
END_TEST

START_TEST(test_dsdt_pvpanic)
{
	/* IO (Decode16, 0x505, 0x505, 1, 1) and the end tag */
	static const uint8_t io[] = {
		0x47, 0x01, 0x05, 0x05, 0x05, 0x05, 0x01, 0x01, 0x79, 0x00,
	};
	const uint8_t *d, *body, *scope;
	uint32_t len;

	build(1);
	d = dsdt();
	body = d + HDR_LEN;
	len = rd32(d + 4) - HDR_LEN;
	ck_assert_ptr_nonnull(memfind(body, len, "_HID\x0dQEMU0001", 14));
	ck_assert_ptr_nonnull(memfind(body, len, "PEVT", 4));
	ck_assert_ptr_nonnull(memfind(body, len, io, sizeof(io)));

	/* The \_SB scope's one-byte PkgLength runs exactly to the end. */
	scope = memfind(body, len, "\x10", 1);
	ck_assert_ptr_nonnull(scope);
	ck_assert_mem_eq(scope + 2, "\\_SB_", 5);
	ck_assert_uint_eq(scope[1] & 0xc0, 0);
	ck_assert_ptr_eq(scope + 1 + scope[1], d + rd32(d + 4));
}
END_TEST

static const unsigned int cpu_counts[] = { 1, 2, 8, 64 };

START_TEST(test_madt_cpus)
{
	unsigned int ncpus = cpu_counts[_i];
	unsigned int lapics = 0, ioapics = 0, irq0 = 0, sci = 0, nmi = 0;
	uint64_t seen = 0;
	const uint8_t *m, *e, *end;

	build(ncpus);
	m = find_table("APIC");
	ck_assert_uint_eq(rd32(m + 36), LAPIC_START);
	ck_assert_uint_eq(rd32(m + 40) & 1, 1);		/* PCAT_COMPAT */

	end = m + rd32(m + 4);
	for (e = m + 44; e < end; e += e[1]) {
		ck_assert_uint_ge(e[1], 2);
		ck_assert(e + e[1] <= end);
		switch (e[0]) {
		case 0:		/* Processor Local APIC */
			ck_assert_uint_eq(e[1], 8);
			ck_assert_uint_lt(e[3], ncpus);
			ck_assert_uint_eq(e[2], e[3]);
			ck_assert_uint_eq(rd32(e + 4) & 1, 1);	/* enabled */
			ck_assert_uint_eq(seen & (1ULL << e[3]), 0);
			seen |= 1ULL << e[3];
			lapics++;
			break;
		case 1:		/* I/O APIC */
			ck_assert_uint_eq(e[1], 12);
			ck_assert_uint_eq(e[2], ncpus);
			ck_assert_uint_eq(rd32(e + 4), IOAPIC_START);
			ck_assert_uint_eq(rd32(e + 8), 0);
			ioapics++;
			break;
		case 2:		/* Interrupt Source Override */
			ck_assert_uint_eq(e[1], 10);
			ck_assert_uint_eq(e[2], 0);		/* ISA */
			if (e[3] == 0) {
				ck_assert_uint_eq(rd32(e + 4), 2);
				ck_assert_uint_eq(rd16(e + 8), 0x5);
				irq0++;
			} else if (e[3] == IRQ_ACPI_SCI) {
				ck_assert_uint_eq(rd32(e + 4), IRQ_ACPI_SCI);
				ck_assert_uint_eq(rd16(e + 8), 0xd);
				sci++;
			} else {
				ck_abort_msg("override for IRQ %u", e[3]);
			}
			break;
		case 4:		/* Local APIC NMI */
			ck_assert_uint_eq(e[1], 6);
			ck_assert_uint_eq(e[2], 0xff);
			ck_assert_uint_eq(e[5], 1);		/* LINT1 */
			nmi++;
			break;
		default:
			ck_abort_msg("unexpected MADT entry type %u", e[0]);
		}
	}
	ck_assert_ptr_eq(e, end);
	ck_assert_uint_eq(lapics, ncpus);
	ck_assert_uint_eq(seen, ncpus == 64 ? ~0ULL : (1ULL << ncpus) - 1);
	ck_assert_uint_eq(ioapics, 1);
	ck_assert_uint_eq(irq0, 1);
	ck_assert_uint_eq(sci, 1);
	ck_assert_uint_eq(nmi, 1);
}
END_TEST

/* Everything a table hangs off checksums right, whatever the CPU count. */
START_TEST(test_all_checksums)
{
	const uint8_t *f;

	build(cpu_counts[_i]);
	xsdt();
	f = find_table("FACP");
	find_table("APIC");
	table_at(rd32(f + 40), "DSDT");
}
END_TEST

START_TEST(test_writes_only_its_area)
{
	size_t a;

	build(64);
	for (a = 0; a < LOWMEM_SIZE; a++) {
		if (a >= ACPI_RSDP_START && a < ACPI_TABLES_END)
			continue;
		if (mem[a] != POISON)
			ck_abort_msg("byte at %#zx changed", a);
	}
}
END_TEST

/* No hidden state: two guests with different CPU counts in a row. */
START_TEST(test_rebuild_independent)
{
	uint8_t *other = malloc(LOWMEM_SIZE);

	ck_assert_ptr_nonnull(other);
	build(8);
	ck_assert_int_eq(acpi__build(other, LOWMEM_SIZE, 2, NULL, NULL, 0), 0);
	build(8);
	ck_assert_int_eq(memcmp(mem + ACPI_RSDP_START, other + ACPI_RSDP_START,
				ACPI_TABLES_END - ACPI_RSDP_START) != 0, 1);
	/* Rebuilding with the same count gives byte-identical tables. */
	ck_assert_int_eq(acpi__build(other, LOWMEM_SIZE, 8, NULL, NULL, 0), 0);
	ck_assert_int_eq(memcmp(mem + ACPI_RSDP_START, other + ACPI_RSDP_START,
				ACPI_TABLES_END - ACPI_RSDP_START), 0);
	free(other);
}
END_TEST

/*
 * Device (VRnn) for each virtio-mmio device: the _HID Linux's virtio_mmio
 * binds, its _UID, Memory32Fixed of the window, an extended interrupt
 * descriptor (consumer, level, active-high, exclusive) with the GSI.
 */
START_TEST(test_dsdt_virtio_mmio)
{
	static const struct acpi_virtio_mmio v[] = {
		{ 0xd0000000, 0x200, 16 },
		{ 0xd0001000, 0x200, 17 },
	};
	static const uint8_t res1[] = {
		0x86, 0x09, 0x00, 0x01, 0x00, 0x10, 0x00, 0xd0,
		0x00, 0x02, 0x00, 0x00,
		0x89, 0x06, 0x00, 0x01, 0x01, 17, 0x00, 0x00, 0x00,
		0x79, 0x00,
	};
	const uint8_t *d, *body, *scope, *dev;
	uint32_t len, slen;
	unsigned int nbytes;

	ck_assert_int_eq(acpi__build(mem, LOWMEM_SIZE, 2, NULL, v, 2), 0);
	d = dsdt();
	body = d + HDR_LEN;
	len = rd32(d + 4) - HDR_LEN;
	ck_assert_ptr_nonnull(memfind(body, len, "_HID\x0dLNRO0005\0", 14));
	ck_assert_ptr_nonnull(memfind(body, len, "VR00", 4));
	ck_assert_ptr_nonnull(memfind(body, len, "_UID\x0a\x01", 6));
	ck_assert_ptr_nonnull(memfind(body, len, res1, sizeof(res1)));
	dev = memfind(body, len, "VR01", 4);
	ck_assert_ptr_nonnull(dev);
	/* Device's one-byte PkgLength (before the name) runs to the end. */
	ck_assert_uint_eq(dev[-3], 0x5b);
	ck_assert_uint_eq(dev[-2], 0x82);
	ck_assert_ptr_eq(dev - 1 + dev[-1], d + rd32(d + 4));

	/* The \_SB scope now needs a two-byte PkgLength, still exact. */
	scope = memfind(body, len, "\x10", 1);
	ck_assert_ptr_nonnull(scope);
	nbytes = (scope[1] >> 6) + 1;
	ck_assert_uint_eq(nbytes, 2);
	slen = (scope[1] & 0x0f) | scope[2] << 4;
	ck_assert_mem_eq(scope + 1 + nbytes, "\\_SB_", 5);
	ck_assert_ptr_eq(scope + 1 + slen, d + rd32(d + 4));
}
END_TEST

/* Every device the VMM can have fits (multi-byte PkgLengths, ~2 KiB). */
START_TEST(test_dsdt_virtio_max)
{
	struct acpi_virtio_mmio v[ACPI_MAX_VIRTIO];
	unsigned int i;

	for (i = 0; i < ACPI_MAX_VIRTIO; i++)
		v[i] = (struct acpi_virtio_mmio) {
			0xd0000000 + i * 0x1000, 0x200, i % 24 };
	ck_assert_int_eq(acpi__build(mem, LOWMEM_SIZE, 64, NULL, v,
				     ACPI_MAX_VIRTIO), 0);
	ck_assert_ptr_nonnull(memfind(dsdt(), rd32(dsdt() + 4), "VR1F", 4));
}
END_TEST

static const struct acpi_virtio_mmio bad_virtio[] = {
	{ 0xd0000000, 0x200, 24 },		/* not an IOAPIC pin */
	{ 0xfffffff0, 0x200, 16 },		/* crosses 4 GiB */
	{ 0x100000000ULL, 0x200, 16 },		/* above 4 GiB */
	{ 0xd0000000, 0, 16 },			/* empty window */
};

START_TEST(test_bad_virtio)
{
	ck_assert_int_eq(acpi__build(mem, LOWMEM_SIZE, 1, NULL, &bad_virtio[_i], 1),
			 -EINVAL);
	ck_assert_uint_eq(mem[ACPI_RSDP_START], POISON);
}
END_TEST

/*
 * Device (PCI0): _HID EisaId("PNP0A03"), a _CRS with bus 0, the conf1
 * ports and the BAR window as a producer; the PkgLength runs to the end
 * of the device.  Without a window there is no PCI0.
 */
START_TEST(test_dsdt_pci_host)
{
	static const struct acpi_pci_host pci = { 0xe0000000, 0x10000000 };
	static const uint8_t hid[] = { '_', 'H', 'I', 'D', 0x0c,
				       0x41, 0xd0, 0x0a, 0x03 };
	static const uint8_t crs[] = {
		0x88, 0x0d, 0x00, 0x02, 0x0c, 0x00,	/* WordBusNumber */
		0, 0, 0, 0, 0, 0, 0, 0, 1, 0,		/* 0..0, length 1 */
		0x47, 0x01, 0xf8, 0x0c, 0xf8, 0x0c, 0x01, 0x08,
		0x87, 0x17, 0x00, 0x00, 0x0c, 0x01,	/* DWordMemory */
		0, 0, 0, 0,				/* granularity */
		0x00, 0x00, 0x00, 0xe0,			/* minimum */
		0xff, 0xff, 0xff, 0xef,			/* maximum */
		0, 0, 0, 0,				/* translation */
		0x00, 0x00, 0x00, 0x10,			/* length */
		0x79, 0x00,
	};
	const uint8_t *d, *dev;
	uint32_t len;

	ck_assert_int_eq(acpi__build(mem, LOWMEM_SIZE, 2, &pci, NULL, 0), 0);
	d = dsdt();
	len = rd32(d + 4);
	dev = memfind(d, len, "PCI0", 4);
	ck_assert_ptr_nonnull(dev);
	/* ExtOp, DeviceOp, a two-byte PkgLength running to the end. */
	ck_assert_uint_eq(dev[-4], 0x5b);
	ck_assert_uint_eq(dev[-3], 0x82);
	ck_assert_uint_eq(dev[-2] >> 6, 1);
	ck_assert_ptr_eq(dev - 2 + ((dev[-2] & 0x0f) | dev[-1] << 4), d + len);
	ck_assert_ptr_nonnull(memfind(dev, d + len - dev, hid, sizeof(hid)));
	ck_assert_ptr_nonnull(memfind(dev, d + len - dev, crs, sizeof(crs)));

	ck_assert_int_eq(acpi__build(mem, LOWMEM_SIZE, 2, NULL, NULL, 0), 0);
	ck_assert_ptr_null(memfind(dsdt(), rd32(dsdt() + 4), "PCI0", 4));
}
END_TEST

static const struct acpi_pci_host bad_pci[] = {
	{ 0xe0000000, 0 },			/* empty window */
	{ 0xf0000000, 0x20000000 },		/* crosses 4 GiB */
};

START_TEST(test_bad_pci_host)
{
	ck_assert_int_eq(acpi__build(mem, LOWMEM_SIZE, 1, &bad_pci[_i], NULL,
				     0), -EINVAL);
	ck_assert_uint_eq(mem[ACPI_RSDP_START], POISON);
}
END_TEST

START_TEST(test_bad_virtio_count)
{
	struct acpi_virtio_mmio v[ACPI_MAX_VIRTIO + 1] = { 0 };

	ck_assert_int_eq(acpi__build(mem, LOWMEM_SIZE, 1, NULL, NULL, 1), -EINVAL);
	ck_assert_int_eq(acpi__build(mem, LOWMEM_SIZE, 1, NULL, v,
				     ACPI_MAX_VIRTIO + 1), -EINVAL);
}
END_TEST

static const struct {
	size_t size;
	unsigned int ncpus;
} bad_args[] = {
	{ LOWMEM_SIZE, 0 },
	{ LOWMEM_SIZE, ACPI_MAX_CPUS + 1 },
	{ LOWMEM_SIZE, 1000 },
	{ ACPI_TABLES_END - 1, 1 },
	{ 0, 1 },
};

START_TEST(test_bad_args)
{
	ck_assert_int_eq(acpi__build(mem, bad_args[_i].size, bad_args[_i].ncpus, NULL, NULL, 0),
			 -EINVAL);
	/* Nothing written, not even the clearing of the area. */
	ck_assert_uint_eq(mem[ACPI_RSDP_START], POISON);
	ck_assert_uint_eq(mem[ACPI_TABLES_START], POISON);
}
END_TEST

START_TEST(test_null_mem)
{
	ck_assert_int_eq(acpi__build(NULL, LOWMEM_SIZE, 1, NULL, NULL, 0), -EINVAL);
}
END_TEST

START_TEST(test_exact_size_ok)
{
	ck_assert_int_eq(acpi__build(mem, ACPI_TABLES_END, 64, NULL, NULL, 0), 0);
	ck_assert_ptr_nonnull(find_rsdp());
}
END_TEST

static Suite *acpi_suite(void)
{
	Suite *s = suite_create("acpi");
	TCase *tc;

	tc = tcase_create("rsdp");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_rsdp_valid);
	tcase_add_test(tc, test_xsdt_rsdt_agree);
	tcase_add_loop_test(tc, test_all_checksums, 0,
			    sizeof(cpu_counts) / sizeof(cpu_counts[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("fadt");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_fadt_fields);
	suite_add_tcase(s, tc);

	tc = tcase_create("dsdt");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_dsdt_s5);
	tcase_add_test(tc, test_dsdt_pvpanic);
	tcase_add_test(tc, test_dsdt_virtio_mmio);
	tcase_add_test(tc, test_dsdt_virtio_max);
	tcase_add_loop_test(tc, test_bad_virtio, 0,
			    sizeof(bad_virtio) / sizeof(bad_virtio[0]));
	tcase_add_test(tc, test_bad_virtio_count);
	tcase_add_test(tc, test_dsdt_pci_host);
	tcase_add_loop_test(tc, test_bad_pci_host, 0,
			    sizeof(bad_pci) / sizeof(bad_pci[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("madt");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_madt_cpus, 0,
			    sizeof(cpu_counts) / sizeof(cpu_counts[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("build");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_writes_only_its_area);
	tcase_add_test(tc, test_rebuild_independent);
	tcase_add_loop_test(tc, test_bad_args, 0,
			    sizeof(bad_args) / sizeof(bad_args[0]));
	tcase_add_test(tc, test_null_mem);
	tcase_add_test(tc, test_exact_size_ok);
	suite_add_tcase(s, tc);

	return s;
}

/*
 * CK_ENV: CK_VERBOSITY picks the report, and CK_TAP_LOG_FILE_NAME=- makes
 * Check print TAP for a Meson 'tap' protocol test.
 */
int main(void)
{
	SRunner *sr = srunner_create(acpi_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
