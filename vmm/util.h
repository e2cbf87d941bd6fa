/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef GPIN_UTIL_H
#define GPIN_UTIL_H

#include <stddef.h>
#include <stdint.h>

/*
 * A regular file mapped read-only, for as long as its bytes are needed:
 * the boot images are mapped, copied into guest RAM and unmapped, so the
 * VMM holds no copy of them for the VM's life (docs/ARCHITECTURE.md,
 * "Memory").
 */
struct mapped_file {
	const uint8_t *data;	/* NULL for an empty file */
	size_t size;
};

/* Maps a whole regular file; 0 or -errno. */
int map_file(const char *path, struct mapped_file *f);

/* Unmaps it (no-op for a zeroed struct); the struct is zeroed. */
void unmap_file(struct mapped_file *f);

#endif /* GPIN_UTIL_H */
