#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Writes fuzz_virtio_blk_dev's seed inputs: a driver that sets the device
up as Linux does (status, features, two queues of 16 at fixed addresses,
DRIVER_OK), then offers requests, notifies and completes them.  The fuzzer
mutates from there; without seeds it rarely gets past the status dance.

Each action is 8 bytes: kind (0 register write, 1 register read, 2 a
32-bit write into guest RAM, 3 complete the oldest request of a queue;
bit 7 of the second byte: complete with an error), the second byte, a
16-bit offset, a 32-bit value.  Run in this directory.
"""
import struct

W_REG, R_REG, W_RAM, COMPLETE = 0, 1, 2, 3
# virtio-mmio registers (virtio 1.x, 4.2.2)
FEAT_SEL, DRV_FEAT, DRV_FEAT_SEL = 0x014, 0x020, 0x024
QSEL, QNUM, QREADY, QNOTIFY, STATUS = 0x030, 0x038, 0x044, 0x050, 0x070
QDESC, QAVAIL, QUSED = 0x080, 0x090, 0x0a0
NEXT, WRITE = 1, 2
QS = 16
QUEUES = [(0x1000, 0x2000, 0x3000), (0x4000, 0x5000, 0x6000)]
# SIZE_MAX, SEG_MAX, BLK_SIZE, FLUSH, MQ, DISCARD, WRITE_ZEROES, EVENT_IDX;
# VERSION_1 (bit 32)
FEATURES_LO = (1 << 1 | 1 << 2 | 1 << 6 | 1 << 9 | 1 << 12 | 1 << 13 |
               1 << 14 | 1 << 29)


def act(kind, off, val, b1=0):
    return struct.pack('<BBHI', kind, b1, off, val & 0xffffffff)


def ram(addr, data):
    data = data + b'\0' * (-len(data) % 4)
    return b''.join(act(W_RAM, addr + i, struct.unpack_from('<I', data, i)[0])
                    for i in range(0, len(data), 4))


def setup(event_idx=True):
    lo = FEATURES_LO if event_idx else FEATURES_LO & ~(1 << 29)
    s = act(W_REG, STATUS, 1) + act(W_REG, STATUS, 3)
    s += act(W_REG, DRV_FEAT_SEL, 0) + act(W_REG, DRV_FEAT, lo)
    s += act(W_REG, DRV_FEAT_SEL, 1) + act(W_REG, DRV_FEAT, 1)
    s += act(W_REG, STATUS, 11)
    for q, (desc, avail, used) in enumerate(QUEUES):
        s += act(W_REG, QSEL, q) + act(W_REG, QNUM, QS)
        for reg, addr in ((QDESC, desc), (QAVAIL, avail), (QUSED, used)):
            s += act(W_REG, reg, addr) + act(W_REG, reg + 4, 0)
        s += act(W_REG, QREADY, 1)
    return s + act(W_REG, STATUS, 15)


def chain(q, head, descs):
    """Descriptors from @head on: (addr, len, flags) each, chained."""
    desc = QUEUES[q][0]
    s = b''
    for i, (addr, length, flags) in enumerate(descs):
        nxt = head + i + 1 if i + 1 < len(descs) else 0
        f = flags | (NEXT if i + 1 < len(descs) else 0)
        s += ram(desc + 16 * (head + i), struct.pack('<QIHH', addr, length,
                                                     f, nxt))
    return s


def offer(q, heads):
    """Publishes @heads in queue @q's available ring, then notifies."""
    avail = QUEUES[q][1]
    s = b''
    for i, h in enumerate(heads):
        s += ram(avail + 4 + 2 * i, struct.pack('<HH', h, 0))
    s += ram(avail, struct.pack('<HH', 0, len(heads)))
    return s + act(W_REG, QNOTIFY, q)


def hdr(addr, rtype, sector):
    return ram(addr, struct.pack('<IIQ', rtype, 0, sector))


T_IN, T_OUT, T_FLUSH, T_GET_ID, T_DISCARD = 0, 1, 4, 8, 11


def write(name, data):
    with open(name, 'wb') as f:
        f.write(data)


def main():
    # a READ of 512 bytes, completed
    s = setup() + hdr(0x8000, T_IN, 0)
    s += chain(0, 0, [(0x8000, 16, 0), (0x9000, 512, WRITE),
                      (0xa000, 1, WRITE)])
    write('read', s + offer(0, [0]) + act(COMPLETE, 0, 0))
    # a misaligned WRITE (bounced) and a FLUSH on queue 1, one failed
    s = setup() + hdr(0x8000, T_OUT, 8) + hdr(0x8100, T_FLUSH, 0)
    s += chain(1, 0, [(0x8000, 16, 0), (0x9001, 1024, 0), (0xa000, 1, WRITE)])
    s += chain(1, 3, [(0x8100, 16, 0), (0xa001, 1, WRITE)])
    write('write-flush', s + offer(1, [0, 3]) + act(COMPLETE, 0, 0, 1) +
          act(COMPLETE, 0, 0, 0x81))
    # GET_ID (completes at once) and a DISCARD, without EVENT_IDX
    s = setup(event_idx=False) + hdr(0x8000, T_GET_ID, 0)
    s += hdr(0x8100, T_DISCARD, 0) + ram(0x8110, struct.pack('<QII', 0, 8, 0))
    s += chain(0, 0, [(0x8000, 16, 0), (0x9000, 20, WRITE),
                      (0xa000, 1, WRITE)])
    s += chain(0, 3, [(0x8100, 32, 0), (0xa001, 1, WRITE)])
    write('getid-discard', s + offer(0, [0, 3]) + act(COMPLETE, 0, 0))
    # a READ in flight across a device reset (status 0)
    s = setup() + hdr(0x8000, T_IN, 0)
    s += chain(0, 0, [(0x8000, 16, 0), (0x9000, 4096, WRITE),
                      (0xa000, 1, WRITE)])
    write('reset-inflight', s + offer(0, [0]) + act(W_REG, STATUS, 0) +
          act(COMPLETE, 0, 0) + setup())


if __name__ == '__main__':
    main()
