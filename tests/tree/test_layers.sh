#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The layers only look down (docs/architecture.md): lib/ includes nothing of tools/ or
# user/; tools/util/, the programs' shared layer, nothing of user/ or of a program; no
# file of tools/ or tests/ includes a file of user/. And no circle in the import graph
# of user/, tools/util/ or tools/agent/ (tools/lint/circles.py, on the built objects).
set -u
cd "$(dirname "$0")/../.." || exit 1
build=${XPILE_BUILD:-build}
bad=0
# Every "..." include of lib/, tools/ and tests/ resolved as the Makefile's -I flags do,
# and those that look up named. The idle policy's unit suite builds user/idle.c, which
# knows nothing of the engine.
up=$(git ls-files --cached --others --exclude-standard lib tools tests | grep -E '\.[ch]$' |
	/usr/bin/env python3 -c '
import os, re, sys
inc = re.compile(r"^\s*#\s*include\s+\"([^\"]+)\"", re.M)
allowed = {"tests/unit/test_idle.c"}
for f in sys.stdin.read().split():
    if not os.path.exists(f) or f in allowed:
        continue
    for name in inc.findall(open(f, errors="replace").read()):
        for d in (os.path.dirname(f), "tools/util", "lib/include", "bpf", "lib", "tests/lib"):
            p = os.path.normpath(os.path.join(d, name))
            if not os.path.exists(p):
                continue
            bad = p.startswith("user/") or \
                (f.startswith("lib/") and p.startswith("tools/")) or \
                (f.startswith("tools/util/") and p.startswith("tools/") and
                 not p.startswith("tools/util/"))
            if bad:
                print(f"{f} includes {p}")
            break
')
if [ -n "$up" ]; then
	echo "includes that look up (lib/ < tools/util/ < the programs; nothing includes user/):"
	echo "$up"
	bad=$((bad + 1))
fi

if [ -d "$build/obj/user" ] && [ -d "$build/obj/tools/agent" ]; then
	out=$(/usr/bin/env python3 tools/lint/circles.py "$build") || { echo "$out"; exit 1; }
	echo "$out"
	circles=$(awk '/^[a-z]+: / {g = $1} /^  [0-9]+: / {print g " " $0}' <<<"$out" |
		grep -E ': +[0-9]+: (user|tools/util|tools/agent)/' || true)
	if [ -n "$circles" ]; then
		echo "circles in user/, tools/util/ or tools/agent/:"
		echo "$circles"
		bad=$((bad + 1))
	fi
else
	echo "SKIP: $build/obj not built: run make"
	exit 77
fi
[ "$bad" = 0 ] || { echo "FAIL: $bad finding(s)"; exit 1; }
echo "ok: the layers look down, no circle in user/, tools/util/, tools/agent/"
