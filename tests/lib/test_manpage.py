# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpintest.manpage: a man page against a --help text."""

import unittest

from gpintest import manpage

HELP = """Usage: gpin-vmm --kernel BZIMAGE [options]
  -k, --kernel FILE    Linux bzImage
  -d, --disk PATH[,ro][,pin=fast|locked|kernel][,queues=N]
             [,service=vcpu|iothread][,irq_hold=auto|US]
                       pin=fast|locked: gpin.ko's async DIO (not a word)
      --print-config   print the settings
"""

PAGE = """*-k*, *--kernel* _FILE_
*-d*, *--disk* _PATH_
*--print-config*
*pin=*fast
*queues=*_N_
*service=*vcpu
"""


class Missing(unittest.TestCase):
    def test_options_and_words(self):
        longs, words = manpage.options(HELP)
        self.assertEqual(longs, {"kernel", "disk", "print-config"})
        self.assertEqual(words, {"pin", "queues", "service", "irq_hold"})

    def test_what_the_page_lacks(self):
        self.assertEqual(manpage.missing(HELP, PAGE), ["irq_hold="])
        self.assertEqual(manpage.missing(HELP, PAGE + "*irq_hold=*auto"), [])

    def test_a_mention_in_prose_does_not_count(self):
        self.assertEqual(manpage.missing("  --quiet  q", "use --quiet"),
                         ["--quiet"])


if __name__ == "__main__":
    unittest.main()
