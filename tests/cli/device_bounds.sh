#!/usr/bin/env bash
# device_bounds.sh - every field of every shipped device file (discovered, not listed) set to its bounds:
# no prediction prints inf, nan, a negative time or MFU above 100 % with exit 0 (issue 30;
# tests/robustness/device_bounds.py).  About 900 predictions: 4 min on the 2-core machine.
# ctest-labels: slow
exec python3 "$PF_SRC/tests/robustness/device_bounds.py" "$PREFLIGHT" "$PF_SRC"
