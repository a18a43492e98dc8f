#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Each public header declares what its sources define, and docs/architecture.md's table
# of the pieces says which sources those are: every XP_API function of a header row is
# defined in one of the row's lib/ sources (or inline in a header of the row), and every
# exported definition of a row's source is declared by a header of that row. A function
# moved to another file, or declared in another header, fails here until the header and
# the table follow it. The engine API's rows (user/api_*.c) are checked the same way.
set -u
cd "$(dirname "$0")/../.." || exit 1
/usr/bin/env python3 - <<'EOF'
import re, sys, glob, os

rows = []
for line in open('docs/architecture.md'):
    if not line.startswith('| `xpile/'):
        continue
    cells = [c.strip() for c in line.strip().strip('|').split('|')]
    heads = re.findall(r'`(xpile/[a-z0-9_]+\.h)`', cells[0])
    srcs = re.findall(r'`((?:lib|user)/[a-z0-9_/]+\.c)`', cells[1])
    rows.append((heads, srcs))
if not rows:
    sys.exit('FAIL: no header rows in docs/architecture.md')

def strip(t):
    return re.sub(r'/\*.*?\*/|//[^\n]*', '', t, flags=re.S)

def declared(h):
    t = strip(open('lib/include/' + h).read())
    ext = set(re.findall(r'XP_API[^;{(]*?\b(xp_[a-z0-9_]+)\s*\(', t))
    inl = set(re.findall(r'static inline[^;{(]*?\b(xp_[a-z0-9_]+)\s*\(', t))
    return ext, inl

def defined(c):
    t = strip(open(c).read())
    # a definition at column 0 that is not static: its name before the first '('
    out = set()
    for m in re.finditer(r'^(?!static|typedef|struct [a-z_]+ \{|#)[a-z_][^;(\n]*?\b(xp_[a-z0-9_]+)\s*\([^;]*?\)\s*\{', t, flags=re.M | re.S):
        out.add(m.group(1))
    return out

exported = set()
for h in glob.glob('lib/include/xpile/*.h'):
    exported |= declared(h[len('lib/include/'):])[0]

bad = []
listed = set()
for heads, srcs in rows:
    for h in heads:
        if not os.path.exists('lib/include/' + h):
            bad.append(f'docs/architecture.md names {h}, which does not exist')
    heads = [h for h in heads if os.path.exists('lib/include/' + h)]
    for s in srcs:
        if not os.path.exists(s):
            bad.append(f'docs/architecture.md names {s} for {", ".join(heads)}, which does not exist')
    srcs = [s for s in srcs if os.path.exists(s)]
    listed.update(heads)
    decl, inl = set(), set()
    for h in heads:
        e, i = declared(h)
        decl |= e
        inl |= i
    defs = set()
    for s in srcs:
        d = defined(s)
        defs |= d
        for f in sorted(d - decl - inl):
            # a library function no header of the row declares: internal ones are xp__*
            if not f.startswith('xp__') and f in exported:
                bad.append(f'{s} defines {f}, which no header of its row ({", ".join(heads)}) declares')
    for f in sorted(decl - defs):
        bad.append(f'{", ".join(heads)} declares {f}, defined in none of {", ".join(srcs) or "(no source)"}')

for h in sorted(glob.glob('lib/include/xpile/*.h')):
    h = h[len('lib/include/'):]
    if h not in listed and declared(h)[0]:
        bad.append(f'{h} declares XP_API functions and has no row in docs/architecture.md')
for b in bad:
    print(b)
if bad:
    print(f'FAIL: {len(bad)} mismatches between the public headers, their sources and docs/architecture.md')
    sys.exit(1)
print(f'ok: {len(rows)} rows; every XP_API function declared by its row\'s header and defined in its row\'s sources')
EOF
