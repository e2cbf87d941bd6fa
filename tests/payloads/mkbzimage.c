// SPDX-License-Identifier: GPL-2.0-only
/*
 * mkbzimage: wrap a flat 64-bit payload in the smallest bzImage gpin-vmm
 * accepts (Linux boot protocol, Documentation/arch/x86/boot.rst).
 *
 *   mkbzimage [options] PAYLOAD.bin OUT.bzImage
 *     --version HEX      boot protocol version (default 0x020f)
 *     --xloadflags HEX   xloadflags (default 0x1, XLF_KERNEL_64)
 *     --relocatable      set relocatable_kernel
 *     --pref-address HEX pref_address (default 0x100000)
 *
 * The payload must be linked to run at its load address with its 64-bit
 * entry point 0x200 bytes in, as a real kernel's startup_64 is.  The options
 * exist so the tests can also build the malformed images the VMM must
 * refuse.  Host tool: plain C, no guest code here.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SETUP_SECTS		1	/* setup = boot sector + 1 sector */
#define SECTOR			512
#define SETUP_SIZE		((SETUP_SECTS + 1) * SECTOR)

/* Offsets of struct setup_header fields in the setup sectors. */
#define HDR_SETUP_SECTS		0x1f1
#define HDR_SYSSIZE		0x1f4
#define HDR_BOOT_FLAG		0x1fe
#define HDR_JUMP		0x200
#define HDR_MAGIC		0x202
#define HDR_VERSION		0x206
#define HDR_LOADFLAGS		0x211
#define HDR_CODE32_START	0x214
#define HDR_INITRD_ADDR_MAX	0x22c
#define HDR_KERNEL_ALIGNMENT	0x230
#define HDR_RELOCATABLE		0x234
#define HDR_MIN_ALIGNMENT	0x235
#define HDR_XLOADFLAGS		0x236
#define HDR_CMDLINE_SIZE	0x238
#define HDR_PREF_ADDRESS	0x258
#define HDR_INIT_SIZE		0x260
#define HDR_END			0x26c	/* kernel_info_offset ends here */

#define LOADED_HIGH		0x01
#define XLF_KERNEL_64		0x01
#define DEFAULT_PREF_ADDRESS	0x100000ULL
#define PAYLOAD_MAX		(16u << 20)

struct image_opts {
	unsigned long version;
	unsigned long xloadflags;
	int relocatable;
	unsigned long long pref_address;
};

static void put_le(uint8_t *p, unsigned long long v, unsigned int bytes)
{
	for (unsigned int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int parse_hex(const char *s, unsigned long long max,
		     unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno || end == s || *end || *out > max) {
		fprintf(stderr, "mkbzimage: bad number '%s'\n", s);
		return -1;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: mkbzimage [--version HEX] [--xloadflags HEX] "
			"[--relocatable] [--pref-address HEX] PAYLOAD OUT\n");
}

static uint8_t *read_payload(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;

	if (!f) {
		fprintf(stderr, "mkbzimage: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	buf = malloc(PAYLOAD_MAX);
	if (!buf) {
		fclose(f);
		return NULL;
	}
	*len = fread(buf, 1, PAYLOAD_MAX, f);
	if (ferror(f) || !feof(f) || *len <= HDR_JUMP) {
		fprintf(stderr, "mkbzimage: %s: unreadable, too big or shorter "
			"than its 0x200-byte 32-bit stub\n", path);
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static void fill_header(uint8_t *setup, size_t pm_len,
			const struct image_opts *o)
{
	/* Paragraphs of protected-mode code, and memory it needs, page-rounded. */
	size_t paras = (pm_len + 15) / 16;
	size_t init_size = (pm_len + 0xfff) & ~(size_t)0xfff;

	setup[HDR_SETUP_SECTS] = SETUP_SECTS;
	put_le(setup + HDR_SYSSIZE, paras, 4);
	put_le(setup + HDR_BOOT_FLAG, 0xaa55, 2);
	setup[HDR_JUMP] = 0xeb;			/* jmp short past the header */
	setup[HDR_JUMP + 1] = HDR_END - (HDR_JUMP + 2);
	memcpy(setup + HDR_MAGIC, "HdrS", 4);
	put_le(setup + HDR_VERSION, o->version, 2);
	setup[HDR_LOADFLAGS] = LOADED_HIGH;
	put_le(setup + HDR_CODE32_START, DEFAULT_PREF_ADDRESS, 4);
	put_le(setup + HDR_INITRD_ADDR_MAX, 0x7fffffff, 4);
	put_le(setup + HDR_KERNEL_ALIGNMENT, 0x200000, 4);
	setup[HDR_RELOCATABLE] = o->relocatable ? 1 : 0;
	setup[HDR_MIN_ALIGNMENT] = 12;		/* log2(4 KiB) */
	put_le(setup + HDR_XLOADFLAGS, o->xloadflags, 2);
	put_le(setup + HDR_CMDLINE_SIZE, 4095, 4);
	put_le(setup + HDR_PREF_ADDRESS, o->pref_address, 8);
	put_le(setup + HDR_INIT_SIZE, init_size, 4);
}

int main(int argc, char **argv)
{
	struct image_opts o = {
		.version = 0x020f,
		.xloadflags = XLF_KERNEL_64,
		.pref_address = DEFAULT_PREF_ADDRESS,
	};
	uint8_t setup[SETUP_SIZE] = { 0 };
	unsigned long long v;
	uint8_t *pm;
	size_t pm_len;
	FILE *out;
	int i, ok;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--relocatable")) {
			o.relocatable = 1;
			continue;
		}
		if (i + 1 >= argc) {
			usage();
			return 2;
		}
		if (!strcmp(argv[i], "--version")) {
			if (parse_hex(argv[++i], 0xffff, &v))
				return 2;
			o.version = v;
		} else if (!strcmp(argv[i], "--xloadflags")) {
			if (parse_hex(argv[++i], 0xffff, &v))
				return 2;
			o.xloadflags = v;
		} else if (!strcmp(argv[i], "--pref-address")) {
			if (parse_hex(argv[++i], UINT64_MAX, &o.pref_address))
				return 2;
		} else {
			usage();
			return 2;
		}
	}
	if (argc - i != 2) {
		usage();
		return 2;
	}

	pm = read_payload(argv[i], &pm_len);
	if (!pm)
		return 1;
	fill_header(setup, pm_len, &o);

	out = fopen(argv[i + 1], "wb");
	if (!out) {
		fprintf(stderr, "mkbzimage: %s: %s\n", argv[i + 1],
			strerror(errno));
		free(pm);
		return 1;
	}
	ok = fwrite(setup, 1, sizeof(setup), out) == sizeof(setup) &&
	     fwrite(pm, 1, pm_len, out) == pm_len;
	if (fclose(out) || !ok) {
		fprintf(stderr, "mkbzimage: %s: write failed\n", argv[i + 1]);
		free(pm);
		return 1;
	}
	free(pm);
	return 0;
}
