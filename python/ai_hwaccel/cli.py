"""cli: the `ai-hwaccel` console script of the wheel.

The command is the Go program built beside the library (cmd/ai-hwaccel, the
same engine); `make wheel` bundles it as ai_hwaccel/bin/ai-hwaccel, and this
entry point replaces the Python process with it (os.execv), so signals, exit
status and the terminal are the command's own.  A package installed from the
checkout (`pip install ./python`) carries no command: main() then says where
to get one instead of failing obscurely.
"""

import os
import sys

COMMAND = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "ai-hwaccel")


def main():
    if not os.access(COMMAND, os.X_OK):
        sys.stderr.write(
            "ai-hwaccel: this installation of the ai_hwaccel package carries no ai-hwaccel command\n"
            "(%s is missing): install the wheel from `make wheel`, or the command with `make install`.\n" % COMMAND
        )
        return 127
    os.execv(COMMAND, [COMMAND] + sys.argv[1:])
    return 127  # not reached: execv replaces the process or raises


if __name__ == "__main__":
    sys.exit(main())
