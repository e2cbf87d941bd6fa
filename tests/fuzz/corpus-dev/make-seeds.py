#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Writes fuzz_virtio_blk_dev's seed inputs: a driver that sets the device
up as Linux does (status, features, two queues of 16 at fixed addresses,
DRIVER_OK), then offers requests, notifies and completes them.  The fuzzer
mutates from there; without seeds it rarely gets past the status dance.

Each action is 8 bytes: kind (0 register write, 1 register read, 2 a
32-bit write into guest RAM, 3 complete the oldest request of a queue,
4 with the value "exit": the VMM exits and starts again), the second
byte, a 16-bit offset, a 32-bit value.  For a RAM write the second byte
holds the address's bits 16-23; for a completion, bit 7: with an error,
bit 6: only the quiet timer, bit 5: toggle a backend that keeps requests
back.  Run in this directory.
"""
import os
import struct

W_REG, R_REG, W_RAM, COMPLETE, RESTART = 0, 1, 2, 3, 4
RESTART_MAGIC = 0x74697865  # "exit"
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
    return b''.join(act(W_RAM, (addr + i) & 0xffff,
                        struct.unpack_from('<I', data, i)[0], (addr + i) >> 16)
                    for i in range(0, len(data), 4))


def setup(event_idx=True, qs=QS):
    lo = FEATURES_LO if event_idx else FEATURES_LO & ~(1 << 29)
    s = act(W_REG, STATUS, 1) + act(W_REG, STATUS, 3)
    s += act(W_REG, DRV_FEAT_SEL, 0) + act(W_REG, DRV_FEAT, lo)
    s += act(W_REG, DRV_FEAT_SEL, 1) + act(W_REG, DRV_FEAT, 1)
    s += act(W_REG, STATUS, 11)
    for q, (desc, avail, used) in enumerate(QUEUES):
        s += act(W_REG, QSEL, q) + act(W_REG, QNUM, qs)
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


def offer(q, heads, first=0):
    """Publishes @heads in queue @q's available ring from entry @first on
    (a ring of at least first + len(heads) entries), then notifies."""
    avail = QUEUES[q][1]
    s = b''
    for i, h in enumerate(heads):
        s += act(W_RAM, avail + 4 + 2 * (first + i), h)
    s += ram(avail, struct.pack('<HH', 0, first + len(heads)))
    return s + act(W_REG, QNOTIFY, q)


def shared_run(q, first, n, addr, length, flags):
    """@n data descriptors from @first on, each @length bytes at @addr
    (aliased), chained to a status descriptor after them; the flags and
    next fields, then the lengths, then the addresses: what differs."""
    desc = QUEUES[q][0]
    s = b''
    for i in range(n + 1):
        d = desc + 16 * (first + i)
        if i < n:
            s += act(W_RAM, d, addr) + act(W_RAM, d + 8, length)
            s += act(W_RAM, d + 12, (flags | NEXT) | (first + i + 1) << 16)
        else:
            s += act(W_RAM, d, 0xa000) + act(W_RAM, d + 8, 1)
            s += act(W_RAM, d + 12, WRITE)
    return s


def heads_to(q, heads, hdr_addr, nxt):
    """Head descriptors: each a 16-byte header at @hdr_addr, then @nxt."""
    desc = QUEUES[q][0]
    return b''.join(act(W_RAM, desc + 16 * h, hdr_addr) +
                    act(W_RAM, desc + 16 * h + 8, 16) +
                    act(W_RAM, desc + 16 * h + 12, NEXT | nxt << 16)
                    for h in heads)


def hdr(addr, rtype, sector):
    return ram(addr, struct.pack('<IIQ', rtype, 0, sector))


T_IN, T_OUT, T_FLUSH, T_GET_ID, T_DISCARD = 0, 1, 4, 8, 11


def write(name, data):
    with open(name, 'wb') as f:
        f.write(data)
    SEEDS[name] = data


SEEDS = {}


def race_seeds():
    """fuzz_virtio_blk_race's seeds (../corpus-race/): a byte that picks
    the device (bit 0: service=iothread) and the number of racer writes, the
    racer's (value, address) pairs - here the first data descriptor's
    length and flags/next, the chain's head in the available ring - then
    a seed of this target (its completions let the threads run)."""
    desc, avail = QUEUES[0][0], QUEUES[0][1]
    racer = [(512, desc + 16 + 8), (NEXT | WRITE | 2 << 16, desc + 16 + 12),
             (0, avail + 4)]
    prog = b''.join(struct.pack('<II', v, a) for v, a in racer)
    for name in ('read', 'write-flush', 'reset-inflight', 'bounce-budget',
                 'getid-storm'):
        for io in (0, 1):
            with open(os.path.join('..', 'corpus-race', name + ('-iothread'
                                   if io else '')), 'wb') as f:
                f.write(bytes([io | len(racer) << 1]) + prog + SEEDS[name])
    # No racer: 250 READs on a disk that takes ~100 us each, so the
    # device's reset at the end (5 ms in that target) gives up on some;
    # their completions come after the transport is gone.  The headers
    # are guest address 0 (zeros: READ sector 0): only length and
    # flags/next are written.
    s = setup(qs=256)
    for h in range(250):
        d = desc + 16 * h
        s += act(W_RAM, d + 8, 16) + act(W_RAM, d + 12, NEXT | 250 << 16)
    d = desc + 16 * 250
    s += act(W_RAM, d, 0x9000) + act(W_RAM, d + 8, 512)
    s += act(W_RAM, d + 12, NEXT | WRITE | 251 << 16)
    s += act(W_RAM, d + 16, 0xa000) + act(W_RAM, d + 24, 1)
    s += act(W_RAM, d + 28, WRITE)
    s += act(COMPLETE, 0, 0, 63) + offer(0, list(range(250)))
    with open(os.path.join('..', 'corpus-race', 'stale-after-exit'),
              'wb') as f:
        f.write(bytes([0]) + s)


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
    # Queues of 256.  A READ of 128 x 32 KiB = 4 MiB, misaligned (a 4 MiB
    # bounce buffer), every segment the same guest memory above 64 KiB.
    s = setup(qs=256) + hdr(0x8000, T_IN, 0)
    s += heads_to(0, [0], 0x8000, 16)
    s += shared_run(0, 16, 128, 0x10001, 32768, WRITE)
    write('max-request', s + offer(0, [0]) + act(COMPLETE, 0, 0))
    # Nine of them sharing the run: eight fill the bounce budget, the
    # ninth fails at once; then all complete.
    s = setup(qs=256) + hdr(0x8000, T_IN, 0)
    s += heads_to(0, range(9), 0x8000, 16)
    s += shared_run(0, 16, 128, 0x10001, 32768, WRITE)
    s += offer(0, list(range(9)))
    write('bounce-budget', s + act(COMPLETE, 0, 0) * 9)
    # A head offered again while in flight (NEEDS_RESET), the request
    # then completing, a reset and a new start.
    s = setup() + hdr(0x8000, T_IN, 0)
    s += chain(0, 0, [(0x8000, 16, 0), (0x9000, 512, WRITE),
                      (0xa000, 1, WRITE)])
    s += offer(0, [0]) + offer(0, [0], first=1) + act(COMPLETE, 0, 0)
    write('reoffer-busy', s + act(W_REG, STATUS, 0) + setup() +
          offer(0, [0]) + act(COMPLETE, 0, 0))
    # 85 GET_ID chains in a ring of 256, completed on the spot; the quiet
    # timer, then a reset.
    s = setup(qs=256) + hdr(0x8000, T_GET_ID, 0)
    s += heads_to(0, range(0, 256, 3), 0x8000, 0)
    for h in range(0, 255, 3):
        d = QUEUES[0][0] + 16 * h
        s += act(W_RAM, d + 12, NEXT | (h + 1) << 16)
        s += act(W_RAM, d + 16, 0x9000) + act(W_RAM, d + 24, 20)
        s += act(W_RAM, d + 28, WRITE | NEXT | (h + 2) << 16)
        s += act(W_RAM, d + 32, 0xa000) + act(W_RAM, d + 40, 1)
        s += act(W_RAM, d + 44, WRITE)
    write('getid-storm', s + offer(0, list(range(0, 255, 3))) +
          act(COMPLETE, 0, 0, 0x40) + act(W_REG, STATUS, 0))
    # The backend keeps a WRITE back (its ring is full), then a reset and
    # the VMM exiting with the request still prepared.
    s = setup() + hdr(0x8000, T_OUT, 0)
    s += chain(0, 0, [(0x8000, 16, 0), (0x9001, 512, 0), (0xa000, 1, WRITE)])
    s += act(COMPLETE, 0, 0, 0x60) + offer(0, [0])
    write('kept-back-reset', s + act(W_REG, STATUS, 0) +
          act(RESTART, 0, RESTART_MAGIC) + setup())
    race_seeds()


if __name__ == '__main__':
    main()
