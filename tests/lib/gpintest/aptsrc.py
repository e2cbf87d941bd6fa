# SPDX-License-Identifier: GPL-2.0-only
"""Debian source packages for the tests that build one (tests/libvirt).

    python3 -m gpintest.aptsrc version PACKAGE

prints the newest source version apt knows of PACKAGE.  When apt knows
none, it first writes /etc/apt/sources.list.d/gpin-deb-src.sources with a
deb-src twin of every deb entry of this release (deb822 .sources files and
one-line sources.list entries alike; -security left out, as it carries
no sources of interest and may be unreachable), and updates apt's lists.
Another apt running may hold the lists' lock or make a look-up fail for a
moment: look-ups are tried 5 times, the update 6, waiting longer each
time.  Exit 1 (nothing printed) when no source can be had.
"""

import glob
import re
import subprocess
import sys
import time

OUR_LIST = "/etc/apt/sources.list.d/gpin-deb-src.sources"


def _stanzas(text):
    return [s for s in re.split(r"\n\s*\n", text) if s.strip()]


def _field(stanza, name):
    m = re.search(r"^%s:[ \t]*(.*)$" % name, stanza, re.M)
    return m.group(1).split() if m else []


def deb_src(sources_texts, list_text, codename):
    """The text of a .sources file with a deb-src stanza for each deb
    entry of CODENAME (its updates too, not -security)."""
    out = []
    for text in sources_texts:
        for st in _stanzas(text):
            suites = _field(st, "Suites")
            if "deb" not in _field(st, "Types") or codename not in suites:
                continue
            if codename + "-security" in suites:
                continue
            out.append(re.sub(r"^Types:.*$", "Types: deb-src", st.strip(),
                              count=1, flags=re.M))
    for line in list_text.splitlines():
        w = line.split("#", 1)[0].split()
        if len(w) >= 4 and w[0] == "deb" and w[2] == codename:
            out.append("Types: deb-src\nURIs: %s\nSuites: %s\n"
                       "Components: %s" % (w[1], w[2], " ".join(w[3:])))
    return "".join(s + "\n\n" for s in out)


def newest(versions):
    """The newest of Debian version strings (dpkg's order)."""
    best = None
    for v in versions:
        if best is None or subprocess.run(
                ["dpkg", "--compare-versions", v, "gt", best]).returncode == 0:
            best = v
    return best


def retry(fn, tries, pause=1.0, sleep=time.sleep):
    """FN() until it returns something true, TRIES times, waiting PAUSE
    seconds more each time; its last result."""
    result = None
    for i in range(tries):
        result = fn()
        if result:
            break
        if i + 1 < tries:
            sleep(pause * (i + 1))
    return result


def source_versions(package):
    out = subprocess.run(["apt-cache", "showsrc", package],
                         capture_output=True, text=True).stdout
    return [line.split(None, 1)[1].strip() for line in out.splitlines()
            if line.startswith("Version:")]


def codename(os_release="/etc/os-release"):
    with open(os_release) as f:
        m = re.search(r"^VERSION_CODENAME=(\S+)", f.read(), re.M)
    return m.group(1) if m else None


def ensure_sources():
    """Writes OUR_LIST and updates apt's lists; whether it wrote any."""
    rel = codename()
    if not rel:
        return False
    texts = []
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        if path != OUR_LIST:
            with open(path) as f:
                texts.append(f.read())
    try:
        with open("/etc/apt/sources.list") as f:
            one_line = f.read()
    except FileNotFoundError:
        one_line = ""
    text = deb_src(texts, one_line, rel)
    if not text:
        return False
    try:
        with open(OUR_LIST, "w") as f:
            f.write(text)
    except OSError as e:        # not root, or a read-only root
        print("aptsrc: %s: %s" % (OUR_LIST, e), file=sys.stderr)
        return False
    retry(lambda: subprocess.run(["apt-get", "-qq", "update"],
                                 capture_output=True).returncode == 0,
          6, pause=5)
    return True


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] != "version":
        print("usage: python3 -m gpintest.aptsrc version PACKAGE",
              file=sys.stderr)
        return 2
    versions = retry(lambda: source_versions(argv[1]), 5)
    if not versions and ensure_sources():
        versions = retry(lambda: source_versions(argv[1]), 5)
    if not versions:
        return 1
    print(newest(versions))
    return 0


if __name__ == "__main__":
    sys.exit(main())
