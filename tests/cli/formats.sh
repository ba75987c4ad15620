#!/usr/bin/env bash
# formats.sh - the table of output formats (model/cli/formats.c): --format names and
# aliases, -o FILE.suffix, the "valid: ..." lists and which commands allow markdown all
# come from its rows, and every document a command writes goes through the renderers.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
export PREFLIGHT_PROGRESS=0
SC="--machine mn5-acc --model gpt3-175b --gpus 1 --tp 1 --pp 1 --gbs 8"

# the valid names, in table order; markdown only where the command writes it
expect_exit 2 $P predict $SC --format xml
expect_grep '^preflight predict: --format "xml": valid: table, json, csv$' "$T/err"
expect_exit 2 $P predict $SC --format md
expect_grep '^preflight predict: --format "md": valid: table, json, csv$' "$T/err"
expect_exit 2 $P plan --machine lumi-g --model llama2-7b --tokens 1e9 --format xml
expect_grep '^preflight plan: --format "xml": valid: table, json, csv, markdown, tex$' "$T/err"
expect_exit 2 $P predict $SC --format tex
expect_grep '^preflight predict: --format "tex": valid: table, json, csv$' "$T/err"

# each name writes its format (models: the cheapest document)
expect_exit 0 $P models --format table
expect_grep '^id +name +params +FLOPs/sample$' "$T/out"
expect_exit 0 $P models --format csv
expect_grep '^id,name,params,flops_per_sample$' "$T/out"
expect_exit 0 $P models --format json
[ "$(json_get "$T/out" '["schema_version"] > 0')" = True ] && ok || bad "models --format json"

# -o FILE.suffix implies the format: .json, .csv, and .md where markdown is valid
$P models -o "$T/m.json" && [ "$(json_get "$T/m.json" '["models"][0]["id"] != ""')" = True ] && ok || bad "-o .json"
$P models -o "$T/m.csv" && expect_grep '^id,name,params' "$T/m.csv"
$P models -o "$T/m.md" && expect_grep '^id +name' "$T/m.md"   # no markdown for models: a table
$P models --format csv -o "$T/x.json" && expect_grep '^id,name' "$T/x.json" # --format wins over -o
expect_exit 0 $P plan --machine leonardo-booster --model llama2-7b --tokens 3e10 --nodes 4 --tp 2 \
  --dist-opt --recompute selective -o "$T/p.md"
expect_grep '^## Compute resources' "$T/p.md"
expect_exit 0 $P plan --machine leonardo-booster --model llama2-7b --tokens 3e10 --nodes 4 --tp 2 \
  --dist-opt --recompute selective --format md
expect_grep '^## Compute resources' "$T/out"

# errors follow the format: JSON on stderr when -o names a .json file
expect_exit 2 $P predict --machine no-such --model gpt3-175b --nodes 1 -o "$T/e.json"
[ "$(json_get "$T/err" '["error"]["code"]')" = ENOENT ] && ok || bad "-o .json: error not JSON"
finish
