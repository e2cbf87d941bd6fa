# SPDX-License-Identifier: GPL-2.0-only
"""A minimal client of QEMU's machine protocol (QMP) on a unix socket.

The rig needs three things of the test host's QEMU: the registers of every
CPU when it stops making progress, and a clean quit.  QMP gives answers
with a beginning and an end (JSON objects), unlike the human monitor,
whose answers have to be waited out.
"""

import json
import socket


class QMPError(Exception):
    pass


class QMP:
    def __init__(self, path, timeout=20.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""
        greeting = self._read()
        if "QMP" not in greeting:
            raise QMPError("no QMP greeting: %r" % greeting)
        self.execute("qmp_capabilities")

    def _read(self):
        """The next JSON object from QEMU."""
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise QMPError("QEMU closed the QMP socket")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def execute(self, command, **arguments):
        msg = {"execute": command}
        if arguments:
            msg["arguments"] = arguments
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            reply = self._read()
            if "return" in reply:
                return reply["return"]
            if "error" in reply:
                raise QMPError("%s: %s" % (command, reply["error"]))
            # an asynchronous event: not the answer

    def human(self, command_line):
        """The human monitor's answer to COMMAND_LINE."""
        return self.execute("human-monitor-command", **{
            "command-line": command_line})

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
