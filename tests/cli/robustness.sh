#!/usr/bin/env bash
# robustness.sh - issue 30's table (tests/robustness/cases.txt): bounds on both sides of every physical
# quantity, engine failures in every command, strict external formats, cost caps, a full disk and a signal
# during an output's write; run by the bad-input corpus's runner (tests/bad-input/run.py --cases).
exec python3 "$PF_SRC/tests/bad-input/run.py" "$PREFLIGHT" "$PF_SRC" --cases "$PF_SRC/tests/robustness"
