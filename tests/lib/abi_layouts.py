#!/usr/bin/env python3
# Prints the layout table of tests/unit/test_abi.c (every public struct of
# lib/include/xpile/: sizeof, alignment, offset of each top-level field) from clang's
# record layouts. Run after an intended ABI change (with the soname bump):
#   python3 tests/lib/abi_layouts.py . > /tmp/t  and paste it into test_abi.c.
import re, subprocess, sys, glob
root = sys.argv[1]
structs = []
for f in sorted(glob.glob(root + '/lib/include/xpile/*.h')):
    structs += re.findall(r'^struct (xp_[a-z0-9_]+) \{', open(f).read(), re.M)
src = ''.join('#include "xpile/%s"\n' % f.split('/')[-1]
              for f in sorted(glob.glob(root + '/lib/include/xpile/*.h')))
src += ''.join('struct %s *p_%s;\nunsigned long s_%s = sizeof(struct %s);\n' % (s, s, s, s) for s in structs)
out = subprocess.run(['clang', '-I' + root + '/lib/include', '-I' + root + '/bpf', '-D_GNU_SOURCE', '-fsyntax-only',
                      '-Xclang', '-fdump-record-layouts', '-x', 'c', '-'], input=src, capture_output=True, text=True).stdout
lay = {}
for blk in out.split('*** Dumping AST Record Layout')[1:]:
    lines = blk.strip('\n').split('\n')
    m = re.match(r'\s*0 \| struct (\w+)$', lines[0])
    if not m or m.group(1) not in structs or m.group(1) in lay:
        continue
    fields = []
    for l in lines[1:]:
        mm = re.match(r'\s*(\d+) \|   (\S.*?) (\w+)$', l)
        if mm and not l.split('|')[1].startswith('    '):
            fields.append((mm.group(3), int(mm.group(1))))
        sz = re.search(r'\[sizeof=(\d+), align=(\d+)', l)
        if sz:
            lay[m.group(1)] = (fields, int(sz.group(1)), int(sz.group(2)))
for s in structs:
    fields, size, align = lay[s]
    print('\tS(%s, %d, %d),' % (s, size, align))
    for f, off in fields:
        print('\tF(%s, %s, %d),' % (s, f, off))
