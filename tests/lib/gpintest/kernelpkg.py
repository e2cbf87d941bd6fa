# SPDX-License-Identifier: GPL-2.0-only
"""Which Debian kernel release a series means (scripts/kernel-pkg's policy).

A series resolves, through apt at run time, to the newest signed generic
amd64 image whose linux-headers package of the same release can also be
downloaded: the two are published at different times, and gpin.ko must
be built against the exact release the test host boots.  -cloud-, -rt-,
-dbg and -unsigned packages are never picked: cloud lacks drivers the rig
needs, rt changes the locking under test, and unsigned images sometimes
appear before their headers.

    python3 -m gpintest.kernelpkg 6.1|6.12|RELEASE

prints the release (6.1.0-57-amd64, 6.12.118+deb12-amd64...); the
releases it passes over, and why, go to stderr.  Exit 1 when none fits.
"""

import re
import subprocess
import sys

SERIES = {
    "6.1": r"linux-image-(6\.1\.0-[0-9]+-amd64)",
    "6.12": r"linux-image-(6\.12\.[0-9]+\+deb12-amd64)",
}
REFUSED = re.compile(r"-cloud-|-rt-|-dbg$|-unsigned$")


class Unresolved(Exception):
    """No release fits; the message says why."""


class Apt:
    """What the policy asks apt (a fake in the unit tests)."""

    def names(self, regex):
        out = subprocess.run(["apt-cache", "search", "--names-only", regex],
                             capture_output=True, text=True).stdout
        return [line.split()[0] for line in out.splitlines() if line.strip()]

    def candidate(self, package):
        out = subprocess.run(["apt-cache", "policy", package],
                             capture_output=True, text=True).stdout
        return candidate_of(out)


def candidate_of(policy_text):
    """The Candidate: version of apt-cache policy's text, or None.  A name
    apt-cache search lists may only be another package's reference: no
    candidate means it cannot be downloaded."""
    for line in policy_text.splitlines():
        key, _, value = line.strip().partition(" ")
        if key == "Candidate:" and value.strip() not in ("", "(none)"):
            return value.strip()
    return None


def version_key(release):
    """Natural order (sort -V): 6.1.0-9 before 6.1.0-10."""
    return [(0, int(p), "") if p.isdigit() else (1, 0, p)
            for p in re.findall(r"\d+|\D+", release)]


def downloadable(apt, release):
    return bool(apt.candidate("linux-image-" + release) and
                apt.candidate("linux-headers-" + release))


def resolve(want, apt, note=lambda msg: None):
    """The release WANT means: a series' newest with image and headers
    downloadable, or an exact release that has both."""
    if want in SERIES:
        rx = re.compile("^%s$" % SERIES[want])
        releases = sorted({m.group(1) for m in map(rx.match,
                                                   apt.names(rx.pattern))
                           if m}, key=version_key, reverse=True)
        for release in releases:
            if downloadable(apt, release):
                return release
            note("skipping %s (image or headers not downloadable)"
                 % release)
        raise Unresolved("no downloadable linux-image/linux-headers pair "
                         "matches %s" % rx.pattern)
    if REFUSED.search(want):
        raise Unresolved("%s: only the generic signed amd64 flavour is "
                         "supported" % want)
    if want.endswith("-amd64"):
        for kind in ("image", "headers"):
            if not apt.candidate("linux-%s-%s" % (kind, want)):
                raise Unresolved("apt has no linux-%s-%s" % (kind, want))
        return want
    raise Unresolved("unknown kernel '%s' (want 6.1, 6.12 or a release "
                     "like 6.1.0-57-amd64)" % want)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-4], file=sys.stderr)
        return 2

    def note(msg):
        print("kernel-pkg: " + msg, file=sys.stderr)

    try:
        print(resolve(argv[0], Apt(), note))
    except Unresolved as e:
        note(str(e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
