#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Writes the fuzz target's seed inputs: one well-formed request per type.

Layout (see fuzz_virtio_blk.c): byte 0 picks the queue size (2 -> 4),
byte 1 the capacity (16 -> 1024 sectors), byte 2 the flags (0x0c: discard
and write-zeroes negotiated; 0x10 would add EVENT_IDX), byte 3 the range limit; the available ring at
8, descriptors at 32 (queue size 4), the header at 256, data at 512, the
status byte at 1024.  Run in this directory.
"""
import struct

NEXT, WRITE = 1, 2


def seed(name, descs, hdr, extra=b'', nchains=1):
    m = bytearray(1100)
    m[0:4] = bytes([2, 16, 0x0c, 8])
    avail, desc = 8, 32
    struct.pack_into('<HH', m, avail, 0, nchains)
    for i in range(nchains):
        struct.pack_into('<H', m, avail + 4 + 2 * i, 0)
    for i, (addr, length, flags, nxt) in enumerate(descs):
        struct.pack_into('<QIHH', m, desc + 16 * i, addr, length, flags, nxt)
    m[256:256 + len(hdr)] = hdr
    m[272:272 + len(extra)] = extra
    with open(name, 'wb') as f:
        f.write(bytes(m))


def hdr(req_type, sector):
    return struct.pack('<IIQ', req_type, 0, sector)


seed('in', [(256, 16, NEXT, 1), (512, 512, NEXT | WRITE, 2), (1024, 1, WRITE, 0)], hdr(0, 8))
seed('out', [(256, 16, NEXT, 1), (512, 512, NEXT, 2), (1024, 1, WRITE, 0)], hdr(1, 8))
seed('flush', [(256, 16, NEXT, 1), (1024, 1, WRITE, 0)], hdr(4, 0))
seed('getid', [(256, 16, NEXT, 1), (512, 20, NEXT | WRITE, 2), (1024, 1, WRITE, 0)], hdr(8, 0))
seed('discard', [(256, 32, NEXT, 1), (1024, 1, WRITE, 0)], hdr(11, 0),
     struct.pack('<QII', 8, 8, 0))
seed('wzeroes', [(256, 32, NEXT, 1), (1024, 1, WRITE, 0)], hdr(13, 0),
     struct.pack('<QII', 8, 8, 1))
seed('two', [(256, 16, NEXT, 1), (512, 512, NEXT | WRITE, 2), (1024, 1, WRITE, 0)],
     hdr(0, 8), nchains=2)
