# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpintest.ldd: the libraries ldd lists."""

import unittest

from gpintest import ldd

TEXT = """\tlinux-vdso.so.1 (0x00007ffd8a1f2000)
\tliburing.so.2 => /lib/x86_64-linux-gnu/liburing.so.2 (0x00007f1)
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f2)
\tlibmissing.so.1 => not found
\t/lib64/ld-linux-x86-64.so.2 (0x00007f3)
"""


class Libraries(unittest.TestCase):
    def test_paths_in_order(self):
        self.assertEqual(ldd.libraries(TEXT), [
            "/lib/x86_64-linux-gnu/liburing.so.2",
            "/lib/x86_64-linux-gnu/libc.so.6",
            "/lib64/ld-linux-x86-64.so.2"])

    def test_loader_listed_both_ways(self):
        self.assertEqual(ldd.libraries(
            "\t/lib64/ld-linux-x86-64.so.2 => /usr/lib64/ld.so (0x1)\n"),
            ["/lib64/ld-linux-x86-64.so.2", "/usr/lib64/ld.so"])

    def test_static(self):
        self.assertEqual(ldd.libraries("\tnot a dynamic executable\n"), [])

    def test_a_real_program(self):
        # /bin/sh is dynamic on Debian: libc and the loader at least
        import io
        import contextlib
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(ldd.main(["/bin/sh"]), 0)
        self.assertTrue(any("libc.so" in line
                            for line in out.getvalue().splitlines()))


if __name__ == "__main__":
    unittest.main()
