#!/usr/bin/env python3
"""Moves TypeScript modules and rewrites every relative import of them (and their own imports).

usage: python3 scripts/dev-move.py OLD.ts NEW.ts [OLD2.ts NEW2.ts ...]   (paths from the repo root)
A developer tool for restructuring; `git mv` keeps history.
"""
import os, re, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(root)
args = sys.argv[1:]
if len(args) % 2: sys.exit(__doc__)
moves = {os.path.normpath(a): os.path.normpath(b) for a, b in zip(args[::2], args[1::2])}
for old, new in moves.items():
    os.makedirs(os.path.dirname(new), exist_ok=True)
    subprocess.run(['git', 'mv', old, new], check=True)
inverse = {v: k for k, v in moves.items()}
SPEC = re.compile(r"""((?:from|import)\s*\(?\s*['"])(\.{1,2}/[^'"]+)(['"])""")
def ts_of(spec_path):
    base = re.sub(r'\.js$', '', spec_path)
    for cand in (base + '.ts', base + '.tsx', os.path.join(base, 'index.ts')):
        if os.path.exists(cand) or cand in moves or cand in inverse: return cand
    return base + '.ts'
def rel(from_file, target_ts):
    r = os.path.relpath(target_ts, os.path.dirname(from_file))
    if not r.startswith('.'): r = './' + r
    return re.sub(r'\.tsx?$', '.js', r)
changed = 0
for d in ('src', 'test', 'bench', 'scripts', 'projections'):
    for dirpath, _, files in os.walk(d):
        for f in files:
            if not f.endswith(('.ts', '.tsx')): continue
            path = os.path.normpath(os.path.join(dirpath, f))
            old_path = inverse.get(path, path)  # where this file's relative imports were written from
            text = open(path).read()
            def fix(m):
                if not m.group(2).endswith('.js'): return m.group(0)
                target_ts = ts_of(os.path.normpath(os.path.join(os.path.dirname(old_path), m.group(2))))
                new_target = moves.get(target_ts, target_ts)
                if new_target == target_ts and old_path == path: return m.group(0)
                return m.group(1) + rel(path, new_target) + m.group(3)
            new_text = SPEC.sub(fix, text)
            if new_text != text:
                open(path, 'w').write(new_text); changed += 1
print(f'moved {len(moves)}, rewrote imports in {changed} files')
