#!/usr/bin/env bash
# bad_input.sh - the bad-input corpus (tests/bad-input/cases.txt): every case exits with
# its status and a message that says why, and prints nothing on stdout when it fails.
exec python3 "$PF_SRC/tests/bad-input/run.py" "$PREFLIGHT" "$PF_SRC"
