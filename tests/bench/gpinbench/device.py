# SPDX-License-Identifier: GPL-2.0-only
"""A block device of the user's as the benchmark's backing, after a check
that it holds nothing anyone wants: the write jobs overwrite it.

refusals() lists why a device must not be used: not a block device, too
small, mounted or used as swap (itself or a partition of it), held by
another device (device-mapper, md), holding partitions, or carrying a
partition table or filesystem signature that blkid finds.  With
--destroy-data only the first two remain: the user has said the data may
go.  The paths of /sys, /proc and the blkid program are parameters, so the
tests give it a made-up machine.
"""

import os
import stat
import subprocess


def _blkid(path, program):
    """blkid -p's TYPE / PTTYPE of PATH: {} when it finds none."""
    try:
        p = subprocess.run([program, "-p", "-o", "export", path],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True)
    except OSError:
        return {"blkid": "not runnable"}
    found = {}
    for line in p.stdout.splitlines():
        key, _, value = line.partition("=")
        if key in ("TYPE", "PTTYPE"):
            found[key] = value
    return found


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _names(sysfs, name):
    """NAME and its partitions' names."""
    base = os.path.join(sysfs, "class", "block", name)
    parts = [p for p in os.listdir(base)
             if os.path.exists(os.path.join(base, p, "partition"))] \
        if os.path.isdir(base) else []
    return [name] + parts


def refusals(path, destroy_data=False, min_bytes=0, sysfs="/sys",
             proc="/proc", blkid="blkid"):
    """Why PATH must not be the backing: [] when it may."""
    try:
        st = os.stat(path)
    except OSError as e:
        return ["%s: %s" % (path, e.strerror)]
    if not stat.S_ISBLK(st.st_mode):
        return ["%s is not a block device" % path]
    name = os.path.basename(os.path.realpath(path))
    base = os.path.join(sysfs, "class", "block", name)
    size = int(_read(os.path.join(base, "size")) or 0) * 512
    out = []
    if size < min_bytes:
        out.append("%s holds %d MiB; the jobs need %d MiB"
                   % (path, size >> 20, min_bytes >> 20))
    if destroy_data:
        return out
    names = _names(sysfs, name)
    for line in _read(os.path.join(proc, "mounts")).splitlines():
        dev = os.path.basename(line.split(" ", 1)[0])
        if dev in names:
            out.append("/dev/%s is mounted (%s)" % (dev, line.split()[1]))
    for line in _read(os.path.join(proc, "swaps")).splitlines()[1:]:
        dev = os.path.basename(line.split()[0]) if line.split() else ""
        if dev in names:
            out.append("/dev/%s is swap" % dev)
    holders = os.path.join(base, "holders")
    if os.path.isdir(holders) and os.listdir(holders):
        out.append("%s is held by %s" % (path, ", ".join(
            sorted(os.listdir(holders)))))
    if len(names) > 1:
        out.append("%s has partitions (%s)" % (path,
                                                ", ".join(names[1:])))
    sig = _blkid(path, blkid)
    if sig:
        out.append("%s carries %s" % (path, ", ".join(
            "%s=%s" % kv for kv in sorted(sig.items()))))
    return out
