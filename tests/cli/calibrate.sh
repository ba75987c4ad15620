#!/bin/bash
# calibrate.sh - `preflight calibrate`: the cpu back-end for real (once, --quick),
# the GPU back-ends' unavailable paths (exit 3 with what was looked for), usage
# errors (exit 2), and the output file: written whole or not at all.
. "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT

# --- help and usage ------------------------------------------------------------
expect_exit 0 "$P" calibrate --help
expect_grep '^Examples:' "$T/out"
expect_grep 'preflight calibrate --backend cpu --quick -o cpu.json' "$T/out"
expect_exit 2 "$P" calibrate
expect_grep 'backend is required' "$T/err"
expect_exit 2 "$P" calibrate --backend tpu
expect_grep 'tpu' "$T/err"
expect_exit 2 "$P" calibrate --backend cpu --quick --full
expect_exit 2 "$P" calibrate --backend cpu --seed 1x
expect_exit 2 "$P" calibrate --backend cpu --bogus
expect_exit 2 "$P" calibrate --backend cpu --quick -o "$T/no/such/dir/c.json"
expect_grep 'does not exist' "$T/err"

# --- the cpu back-end, for real ------------------------------------------------
expect_exit 0 env PF_FAKE_DATE=2000-01-01T00:00:00Z "$P" calibrate --backend cpu --quick -o "$T/c.json"
expect_grep 'calibrate: vector_flops.fp64' "$T/err"   # progress on stderr
if [ -s "$T/out" ]; then bad "stdout should be empty with -o"; else ok; fi
expect_grep '"schema_version":[[:space:]]*1' "$T/c.json"
if command -v python3 >/dev/null; then
  if python3 - "$T/c.json" >"$T/py" 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 1
assert d["backend"] == "cpu" and d["mode"] == "quick"
assert d["date"] == "2000-01-01T00:00:00Z"
assert d["tool"]["name"] == "preflight" and d["tool"]["version"]
assert d["device"]["name"] and d["device"]["count"] == 1 and d["device"]["units"] >= 1
assert d["host"]["cores"] >= 1 and d["host"]["hostname"]
r = d["results"]
for p in ("fp64", "fp32"):
    s = r["vector_flops"][p]
    assert s["unit"] == "FLOP/s", p
    assert s["median"] > 1e8 and s["best"] >= s["median"] and s["cv"] >= 0, p
    assert len(s["samples"]) == s["n"] >= 3, p
for k in ("read", "write", "copy", "triad"):
    s = r["memory_bw"][k]
    assert s["unit"] == "B/s", k
    assert s["median"] > 1e8 and s["best"] >= s["median"] and s["cv"] >= 0, k
    assert s["flag"] in ("ok", "high_cv"), k      # no datasheet on cpu: only cv flags
assert r["launch_latency_s"]["median"] > 0 and r["launch_latency_s"]["best"] <= r["launch_latency_s"]["median"]
assert r["stream_array_B"] > 0
assert "tensor_flops" not in r and "d2d" not in r
assert "vector_flops.fp16" in r["unsupported"]
assert d["provenance"]["date"] == "2000-01-01T00:00:00Z"
print("json ok")
EOF
  then ok; else bad "calibration JSON content"; sed 's/^/  /' "$T/py" >&2; fi
fi
# no temporary file left beside the output
if ls -a "$T" | grep -q '\.tmp\.'; then bad "temporary file left in $T"; else ok; fi

# --- GPU back-ends unavailable: exit 3, say what was looked for and what to do ----
keep() { printf 'KEEP\n' > "$T/keep.json"; }
kept() { if [ "$(cat "$T/keep.json")" = KEEP ]; then ok; else bad "$1: output file was clobbered"; fi; }
if [ -e /dev/nvidiactl ]; then
  echo "skip: an NVIDIA device is present; the no-device path of --backend cuda is not tested"
else
  keep
  expect_exit 3 "$P" calibrate --backend cuda --quick -o "$T/keep.json"
  expect_grep 'libcuda|preflight-cal-cuda' "$T/err"
  expect_grep 'GPU node' "$T/err"
  expect_grep '--backend cpu' "$T/err"
  kept "cuda"
  if [ -x "$PF_BUILD/preflight-cal-cuda" ]; then
    expect_exit 3 "$PF_BUILD/preflight-cal-cuda" --quick
    expect_grep 'libcuda.so.1' "$T/err"
  fi
fi
if [ -e /dev/kfd ]; then
  echo "skip: an AMD GPU driver is present; the no-device path of --backend hip is not tested"
else
  keep
  expect_exit 3 "$P" calibrate --backend hip --quick -o "$T/keep.json"
  expect_grep 'libamdhip64|preflight-cal-hip' "$T/err"
  expect_grep '--backend cpu' "$T/err"
  kept "hip"
  if [ -x "$PF_BUILD/preflight-cal-hip" ]; then
    expect_exit 3 "$PF_BUILD/preflight-cal-hip" --quick
    expect_grep 'libamdhip64' "$T/err"
  fi
fi

# no back-end executable at all
keep
expect_exit 3 env PREFLIGHT_CAL_DIR="$T/nowhere" "$P" calibrate --backend cuda --quick -o "$T/keep.json"
expect_grep "looked for the executable $T/nowhere/preflight-cal-cuda" "$T/err"
expect_grep '--backend cpu' "$T/err"
kept "missing executable"

# --- back-ends that misbehave never cost the user's file ----------------------------
F="$T/fake"; mkdir -p "$F"
printf '#!/bin/sh\necho "this is not json"\nexit 0\n' > "$F/preflight-cal-cuda"
printf '#!/bin/sh\nkill -SEGV $$\n' > "$F/preflight-cal-hip"
chmod +x "$F/preflight-cal-cuda" "$F/preflight-cal-hip"
keep
expect_exit 2 env PREFLIGHT_CAL_DIR="$F" "$P" calibrate --backend cuda --quick -o "$T/keep.json"
expect_grep 'not calibration JSON' "$T/err"
kept "garbage output"
keep
expect_exit 3 env PREFLIGHT_CAL_DIR="$F" "$P" calibrate --backend hip --quick -o "$T/keep.json"
expect_grep 'signal' "$T/err"
kept "crashing back-end"
printf '#!/bin/sh\necho "preflight-cal-cuda: error while loading shared libraries: libcudart.so" >&2\nexit 127\n' > "$F/preflight-cal-cuda"
keep
expect_exit 3 env PREFLIGHT_CAL_DIR="$F" "$P" calibrate --backend cuda --quick -o "$T/keep.json"
expect_grep 'shared library' "$T/err"
kept "loader failure"
# a back-end that works: its JSON lands in the file, atomically; arguments are passed on
cat > "$F/preflight-cal-cuda" <<'EOF'
#!/bin/sh
echo "args: $*" >&2
printf '{"schema_version": 1, "backend": "cuda", "results": {}}\n'
EOF
chmod +x "$F/preflight-cal-cuda"
keep
expect_exit 0 env PREFLIGHT_CAL_DIR="$F" "$P" calibrate --backend cuda --quick --seed 9 -o "$T/keep.json"
expect_grep 'args: --quick --seed 9 --device 0' "$T/err"
expect_grep '"backend": "cuda"' "$T/keep.json"
expect_exit 0 env PREFLIGHT_CAL_DIR="$F" "$P" calibrate --backend cuda --full
expect_grep '"schema_version": 1' "$T/out"
expect_grep 'args: --full' "$T/err"
if ls -a "$T" | grep -q '\.tmp\.'; then bad "temporary file left in $T"; else ok; fi

finish
