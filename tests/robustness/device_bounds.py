#!/usr/bin/env python3
"""device_bounds.py - issue 30's sweep of every field of every shipped device file to its bounds: no
prediction may print inf, nan, a negative time or MFU above 100 % with exit 0.

The device files and their fields are discovered, not listed: every machines/devices/*.cfg (and any
*.cfg under another devices/ folder of machines/, where other work may add some), every numeric setting
or quantity with a unit in it (peak.fp16 = "989.4 TFLOPS", efficiency.gemm = 0.803, units = 132, ...).
Each field is set to an absurdly low and an absurdly high value; the refusal's message names the bound
("... is below 1e+09 FLOP/s, ...", "... is above 1, ..."), and the field is set to that bound and
predicted.  An accepted value (at a bound, or one that no bound refused) must give exit 0 with a sane
document, exit 1 (does not fit / invalid plan: an answer) or exit 2 with a message; exit 0 with an
absurd number fails the test, and so does a crash (a signal).

Usage: device_bounds.py PREFLIGHT SRC_DIR
"""
import concurrent.futures
import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile

SETTING = re.compile(r'([A-Za-z_][\w-]*)\s*=\s*("(?:[^"\\]|\\.)*"|[-+]?[0-9][0-9.eE+-]*L?)\s*;')
QTY = re.compile(r'^\s*([-+]?[0-9][0-9.eE+-]*)\s*([A-Za-z/µ]+)\s*$')
BOUND = re.compile(r'is (?:at or )?(below|above) ([-+0-9.e]+)')
RANGE = re.compile(r'is outside ([(\[])=?([-+0-9.e]+), ([-+0-9.e]+)\]')


def bound_of(side, stderr):
    """The bound a refusal names, as (value, open): from "is below 1e+09", "is at or below 0.01" (open),
    "is above 1", or "is outside (0, 3000]"; None when the message names none."""
    m = BOUND.search(stderr)
    if m:
        return float(m.group(2)), m.group(0).startswith('is at or below')
    m = RANGE.search(stderr)
    if m:
        return (float(m.group(2)), m.group(1) == '(') if side == 'low' else (float(m.group(3)), False)
    return None


def fields(text):
    """(path, start, end, kind, number, unit) of every numeric setting, with its group path."""
    out, depth_names = [], []
    pos = 0
    events = []
    for m in re.finditer(r'([A-Za-z_][\w-]*)\s*=\s*\{|\}|\(|\)', text):
        events.append(m)
    ev = iter(events)
    nxt = next(ev, None)
    for m in SETTING.finditer(text):
        while nxt is not None and nxt.start() < m.start():
            tok = nxt.group(0)
            if tok.endswith('{'):
                depth_names.append(nxt.group(1))
            elif tok == '}' and depth_names:
                depth_names.pop()
            elif tok == '(':
                depth_names.append('(')
            elif tok == ')' and depth_names:
                depth_names.pop()
            nxt = next(ev, None)
        if '(' in depth_names:  # inside a list (provenance): no settings
            continue
        path = '.'.join(depth_names[1:] + [m.group(1)])  # without the root group "device"
        val = m.group(2)
        s, e = m.span(2)
        if val.startswith('"'):
            q = QTY.match(val[1:-1])
            if q:
                out.append((path, s, e, 'qty', float(q.group(1)), q.group(2)))
        elif re.fullmatch(r'[-+]?[0-9]+L?', val):
            out.append((path, s, e, 'int', float(val.rstrip('L')), ''))
        else:
            out.append((path, s, e, 'num', float(val), ''))
    return out


def literal(kind, x, unit):
    if kind == 'qty':
        return '"%.17g %s"' % (x, unit)
    if kind == 'int':
        return '%d' % int(x) if abs(x) < 2**31 else '%dL' % int(x)
    return '%.17g' % x


def si_factor(unit):
    """What the unit multiplies by (to match the SI bounds in the messages): prefix only."""
    pre = {'k': 1e3, 'M': 1e6, 'G': 1e9, 'T': 1e12, 'P': 1e15, 'E': 1e18, 'Ki': 1024.0, 'Mi': 1024.0**2,
           'Gi': 1024.0**3, 'Ti': 1024.0**4, 'm': 1e-3, 'u': 1e-6, 'µ': 1e-6, 'n': 1e-9}
    bits = 0.125 if ('bps' in unit or 'b/s' in unit or unit.endswith('b')) else 1.0
    for p in sorted(pre, key=len, reverse=True):
        base = unit[len(p):]
        if unit.startswith(p) and base and base not in ('in', 'bps'[:0]) and unit not in ('min',):
            if base[0] in 'BbFWsJH' or base.startswith('bit'):
                return pre[p] * bits
    if unit == 'min':
        return 60.0
    if unit == 'h':
        return 3600.0
    return bits


def main():
    binary, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    devs = sorted(set(glob.glob(os.path.join(src, 'machines', 'devices', '*.cfg')) +
                      glob.glob(os.path.join(src, 'machines', '**', 'devices', '*.cfg'), recursive=True)))
    machine = open(os.path.join(src, 'machines', 'mn5-acc.cfg')).read()
    tmp = tempfile.mkdtemp(prefix='pf-devbounds-')
    os.symlink(os.path.join(src, 'machines', 'devices', 'tables'), os.path.join(tmp, 'tables'))
    env = dict(os.environ, PREFLIGHT_PROGRESS='0', PREFLIGHT_JOBS='1')

    def run(tag, dev_text, predict):
        d = os.path.join(tmp, tag + '.d.cfg')
        m = os.path.join(tmp, tag + '.m.cfg')
        open(d, 'w').write(dev_text)
        open(m, 'w').write(re.sub(r'device = "[^"]*"', 'device = "%s"' % d, machine, count=1))
        cmd = [binary, 'predict', '--machine', m, '--model', 'gpt3-1.3b', '--gpus', '1', '--tp', '1',
               '--gbs', '8', '--mbs', '1', '--format', 'json'] if predict else [binary, 'machines', 'show', m]
        try:
            return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(cmd, -1, '', 'timed out after 120 s')

    def absurd(r):
        """Why an exit-0 document is not a result a proposal can quote ('' when it is)."""
        if r.returncode < 0 or r.returncode > 3:
            return 'exit %d (a crash or a signal): %s' % (r.returncode, r.stderr.strip()[-300:])
        if r.returncode != 0:
            return '' if r.stderr.strip() else 'exit %d without a message' % r.returncode
        if re.search(r'\b(-?nan|-?inf)\b', r.stdout, re.I):
            return 'inf or nan printed'
        d = json.loads(r.stdout)
        e = d.get('energy', {})
        for k, x in (('iteration_time_s', d.get('iteration_time_s')), ('mfu', d.get('mfu')),
                     ('samples_per_s', d.get('samples_per_s')), ('facility_J', e.get('facility_J')),
                     ('avg_power_per_gpu_W', e.get('avg_power_per_gpu_W'))):
            if not isinstance(x, (int, float)) or not math.isfinite(x) or x <= 0:
                return '%s = %r' % (k, x)
        if d['mfu'] > 1.0:
            return 'MFU %.1f %%' % (100 * d['mfu'])
        if any(v < 0 for v in d.get('breakdown_s', {}).values() if isinstance(v, (int, float))):
            return 'a negative breakdown term'
        return ''

    def one_field(dev, text, f):
        path, s, e, kind, x, unit = f
        name = os.path.basename(dev)[:-4]
        tag = '%s.%s' % (name, path)
        bad = []
        fac = si_factor(unit) if kind == 'qty' else 1.0
        tried = {0: 0, 1: 0, 2: 0}
        for side, probe in (('low', 1e-300 if kind != 'int' else -2**40), ('high', 1e300 if kind != 'int' else 2**40)):
            val = probe
            r = run(tag + '.' + side, text[:s] + literal(kind, val, unit) + text[e:], True)
            for _ in range(3):  # refused: the message names the bound; predict at it (another may refuse it)
                b = bound_of(side, r.stderr) if r.returncode == 2 else None
                if b is None:
                    break
                nv = b[0] / fac
                nv = (nv * (1 + 1e-9) if nv > 0 else 1e-300) if b[1] else nv
                if kind == 'int':
                    nv = math.ceil(nv) if side == 'low' else math.floor(nv)
                if nv == val:
                    break
                val = nv
                r = run(tag + '.' + side, text[:s] + literal(kind, val, unit) + text[e:], True)
            tried[r.returncode] = tried.get(r.returncode, 0) + 1
            why = absurd(r)
            if why:
                bad.append('%s: %s = %s: %s' % (name, path, literal(kind, val, unit), why))
        return tried, bad

    jobs = []
    for dev in devs:
        text = open(dev).read()
        for f in fields(text):
            jobs.append((dev, text, f))
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda j: one_field(*j), jobs))
    fails = [b for _, bad in results for b in bad]
    for b in fails:
        print('FAIL ' + b, file=sys.stderr)
    ends = {}
    for t, _ in results:
        for k, v in t.items():
            ends[k] = ends.get(k, 0) + v
    print('%d device files, %d fields, %d runs at their bounds (exit 0: %d predicted and sane, 1: %d, 2: %d '
          'refused), %d absurd' % (len(devs), len(jobs), sum(ends.values()), ends.get(0, 0), ends.get(1, 0),
                                   ends.get(2, 0), len(fails)))
    sys.exit(1 if fails or not jobs else 0)


if __name__ == '__main__':
    main()
