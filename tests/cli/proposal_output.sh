#!/usr/bin/env bash
# proposal_output.sh - output a proposal can take as it is (issue 24, item 3): plan's Markdown and LaTeX
# hold no machine path and a first table of at most 8 columns, each source or assumption listed once,
# no unverified note ("to be verified") in the output or anywhere in the sources; figures as SVG, PDF and PNG that read
# back (PNG through cairo, PDF through poppler's pdfinfo), legends inside the canvas, one colour per series.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.bash"
P=${PREFLIGHT:?}
IMG=${PF_IMGREAD:?}
cd "$T"
PL="--machine lumi-g --model gpt3-175b --tp 4 --pp 32 --mbs 1 --gbs 1536 --precision fp16 --sp --dist-opt
  --recompute selective --nodes 16,32,64,128 --tokens 3e11 --min-efficiency 0.8"

# --- Markdown: no absolute path, first table <= 8 columns, notes listed once
mkdir -p fig
expect_exit 0 "$P" plan $PL --format md --plot "$T/fig/cost.png" -o "$T/plan.md"
python3 - plan.md "$T" "$PF_SRC" <<'PY' && ok || bad "plan --format md: path, columns or notes"
import re, sys
t = open(sys.argv[1]).read()
for root in sys.argv[2:]:
    assert root not in t, "machine path %s in the Markdown" % root
# an absolute path: a slash after a space, a parenthesis or a line start, then a folder
assert not re.search(r"(^|[\s(`'\"])/[\w.-]+/", t, re.M), re.search(r"(^|[\s(`'\"])/[\w.-]+/", t, re.M)
assert "to " "verify" not in t
lines = t.splitlines()
first = next(i for i, l in enumerate(lines) if l.startswith("|"))
cols = [c for c in lines[first].strip().strip("|").split("|")]
assert len(cols) <= 8, (len(cols), lines[first])
assert re.match(r"^\|(---:?\|){%d}$" % len(cols), lines[first + 1]), lines[first + 1]
assert "node-hours" in lines[first] and "range" in lines[first], lines[first]
# the second table holds the rest
tables = [i for i, l in enumerate(lines) if l.startswith("|") and (i == 0 or not lines[i - 1].startswith("|"))]
assert len(tables) == 3, tables  # the first table, the details per scale, the ranges
for i in tables:
    assert len(lines[i].strip("|").split("|")) <= 8, lines[i]
assert "![" in t and "](cost.png)" in t, "the figure is not named by its file name"
notes = [l for l in lines[lines.index("Sources and assumptions:"):] if l.startswith("- ")]
labels = [l[2:].split(":")[0].replace(" (assumption)", "") for l in notes]
assert len(labels) == len(set(labels)), labels
assert len(notes) == len(set(notes)), "a note repeated"
for need in ("prediction", "checkpoints", "failures", "jobs", "billing", "range", "queueing"):
    assert need in labels, (need, labels)
assert any("(assumption)" in l for l in notes), "no note says what is assumed"
PY

# --- LaTeX: booktabs, the same first table, escaped, no path
expect_exit 0 "$P" plan $PL --format tex --plot "$T/fig/cost.pdf" -o "$T/plan.tex"
python3 - plan.tex "$T" "$PF_SRC" <<'PY' && ok || bad "plan --format tex"
import re, sys
t = open(sys.argv[1]).read()
for root in sys.argv[2:]:
    assert root not in t, root
spec = re.findall(r"\\begin\{tabular\}\{([lrc]+)\}", t)
assert len(spec) == 2 and len(spec[0]) <= 8, spec
assert t.count("\\toprule") == 2 and t.count("\\bottomrule") == 2
assert "\\includegraphics[width=\\linewidth]{cost.pdf}" in t
assert re.search(r"[^\\]%", t.split("\n", 1)[1]) is None, "an unescaped % after the first line"
assert "to " "verify" not in t
PY
expect_exit 0 "$P" plan $PL -o "$T/by-suffix.tex"
expect_grep '^\\begin\{tabular\}' by-suffix.tex
expect_exit 2 "$P" validate "$PF_SRC/scenarios/validation/epicure.csv" --format tex
expect_grep '"tex": valid: table, json, csv, markdown' "$T/err"   # the formats with a validate renderer (options.c)

# --- the text table: the same notes, no path, no unverified note
expect_exit 0 "$P" plan $PL
expect_grep '^sources and assumptions' "$T/out"
if grep -q "to ""verify" "$T/out" || grep -qF "$PF_SRC" "$T/out"; then bad "plan table: a path or an unverified note"; else ok; fi

# --- figures: the suffix picks the kind; PNG and PDF read back
[ "$(head -c 8 fig/cost.png | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] && ok || bad "cost.png is not a PNG"
read -r w h inked < <("$IMG" fig/cost.png) && ok || bad "cairo does not read cost.png back"
[ "${w:-0}" -ge 1000 ] && [ "${h:-0}" -ge 1000 ] && [ "${inked:-0}" -gt 20000 ] && ok \
  || bad "cost.png: ${w:-?}x${h:-?} with ${inked:-?} inked pixels"
pdfinfo fig/cost.pdf >pdfinfo.txt 2>&1 && ok || bad "pdfinfo does not read cost.pdf"
expect_grep '^Pages: +1$' pdfinfo.txt
expect_grep '^Producer: +cairo' pdfinfo.txt
cp fig/cost.pdf first.pdf
expect_exit 0 "$P" plan $PL --plot "$T/fig/cost.pdf"
cmp -s first.pdf fig/cost.pdf && ok || bad "the same PDF figure differs from one run to the next"
expect_exit 2 "$P" plan $PL --plot "$T/cost.jpg"
expect_grep 'valid: .svg, .pdf, .png' "$T/err"
[ ! -e cost.jpg ] && ok || bad "a refused --plot wrote a file"
expect_exit 2 "$P" sweep --machine lumi-g --model llama2-7b --nodes 2,4 --plot "$T/s.gif"
expect_exit 0 "$P" validate "$PF_SRC/scenarios/validation/epicure.csv" --plot "$T/parity.png"
"$IMG" parity.png >/dev/null && ok || bad "validate --plot x.png does not read back"

# --- legends inside the canvas, one colour per series in every panel (long names: two machines)
expect_exit 0 "$P" sweep --machines leonardo-booster,lumi-g --model llama2-13b --gbs 512 --tp 4 --pp 2 --sp \
  --dist-opt --recompute selective --nodes 8,16,32 --plot "$T/sw.svg"
expect_exit 0 "$P" plan $PL --plot "$T/cost.svg"
for f in sw.svg cost.svg; do
python3 - "$f" <<'PY' && ok || bad "$f: a legend outside the canvas or a series in two colours"
import sys, xml.etree.ElementTree as ET
svg = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
W, H = float(svg.get("width")), float(svg.get("height"))
legend = [t for t in svg.iter(ns + "text") if t.get("class") == "legend"]
assert legend, "no legend"
for t in legend:  # 0.6 em per character: DejaVu Sans' mean advance is below it
    x, y, size = float(t.get("x")), float(t.get("y")), float(t.get("font-size"))
    assert 0 <= x and x + 0.6 * size * len(t.text) <= W and 0 < y <= H, (t.text, x, W)
colour = {}
for c in svg.iter(ns + "circle"):
    if c.get("class") == "pt":
        colour.setdefault(c.get("data-series"), set()).add(c.get("fill"))
assert all(len(v) == 1 for v in colour.values()), colour
names = sorted(colour)
for n in names:  # an ideal is drawn in the colour of its series
    if n.startswith("ideal: ") and n[7:] in colour:
        assert colour[n] == colour[n[7:]], (n, colour[n], colour[n[7:]])
ylabels = [t.text for t in svg.iter(ns + "text") if t.get("class") == "ylabel"]
assert all(l.count("(") <= 1 and ":" not in l for l in ylabels), ylabels  # one unit per axis
PY
done

# --- no unverified note anywhere in the sources, machines, docs or scripts
hits=$(grep -rIl --exclude-dir=.git --exclude-dir=build -e "to ""verify" "$PF_SRC/model" "$PF_SRC/machines" \
  "$PF_SRC/docs" "$PF_SRC/scripts" "$PF_SRC/scenarios" "$PF_SRC/tests" "$PF_SRC/README.md" 2>/dev/null)
[ -z "$hits" ] && ok || bad "unverified notes in: $hits"
finish
