#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The patches of an upstream series that add new files, kept equal to the files they add.

A series for upstream (git format-patch files, applied with `git am`) must carry the files it adds. We edit
those files as files (papi-component/overlay/, libpfm4-riscv/lib/, ...; some are generated from events/), so
each such patch is derived from them: its header and message (everything up to the `---` line) are written
by hand, the rest (diffstat and the diff that adds the files) is what `git format-patch` makes of the files.
A manifest says which patch adds which file from which source:

    # patch (relative to the patches folder)   file in the upstream tree   source
    upstream/00a-linux-riscv-cpuinfo.patch      src/riscv_cpuinfo.c         overlay/riscv_cpuinfo.c
    0005-RISC-V-add-the-event-tables.patch      lib/events/*                gen:riscv_*.h

A source is a path relative to the manifest's folder, or gen:NAME in the folder given with --gen (generated
files); a source with a `*` names every matching file, and the tree path's `*` becomes each file's name.

    series_files.py --manifest M [--gen DIR] --check   exit 1 (naming each) if a patch differs from its files
    series_files.py --manifest M [--gen DIR] --write   rewrite the patches that differ

The build runs --check before it applies a series, so what it applies, and what upstream would get, is
always the files of this tree; --write is how a change of those files reaches the patch.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile


class SeriesError(Exception):
    pass


def read_manifest(path, gen_dir):
    """{patch: [(tree path, source file)]} in manifest order."""
    base = os.path.dirname(os.path.abspath(path))
    patches = {}
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            if len(fields) != 3:
                raise SeriesError(f"{path}:{lineno}: want 'patch tree-path source', got {line!r}")
            patch, tree_path, source = fields
            if source.startswith("gen:"):
                if not gen_dir:
                    raise SeriesError(f"{path}:{lineno}: {source} needs --gen DIR")
                source = os.path.join(gen_dir, source[4:])
            else:
                source = os.path.join(base, source)
            if "*" in source:
                found = sorted(glob.glob(source))
                if not found:
                    raise SeriesError(f"{path}:{lineno}: no file matches {source}")
                if tree_path.count("*") != 1:
                    raise SeriesError(f"{path}:{lineno}: {tree_path}: one '*' wanted for a source pattern")
                files = [(tree_path.replace("*", os.path.basename(s)), s) for s in found]
            else:
                if not os.path.isfile(source):
                    raise SeriesError(f"{path}:{lineno}: {source}: no such file")
                files = [(tree_path, source)]
            patches.setdefault(os.path.join(base, "patches", patch), []).extend(files)
    return patches


def patch_header(patch):
    """The hand-written part: mail header and message, up to and including the '---' line."""
    try:
        with open(patch, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise SeriesError(f"{patch}: no such patch (write its header and message, ending with a '---' line)")
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line == "---\n":
            return "".join(lines[: i + 1])
    raise SeriesError(f"{patch}: no '---' line after the message")


def git(repo, *args, env=None):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True,
                          env=env).stdout


def diff_part(files):
    """What `git format-patch` writes after the '---' line for a commit adding these files."""
    with tempfile.TemporaryDirectory() as repo:
        env = dict(os.environ, GIT_AUTHOR_NAME="series", GIT_AUTHOR_EMAIL="series@localhost",
                   GIT_COMMITTER_NAME="series", GIT_COMMITTER_EMAIL="series@localhost",
                   GIT_AUTHOR_DATE="2000-01-01T00:00:00Z", GIT_COMMITTER_DATE="2000-01-01T00:00:00Z",
                   GIT_CONFIG_NOSYSTEM="1", HOME=repo)
        git(repo, "init", "-q", env=env)
        git(repo, "commit", "-q", "--allow-empty", "-m", "base", env=env)
        for tree_path, source in files:
            dest = os.path.join(repo, tree_path)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(source, "rb") as src, open(dest, "wb") as out:
                out.write(src.read())
            os.chmod(dest, 0o644)
        git(repo, "add", "-A", env=env)
        git(repo, "commit", "-q", "-m", "files", env=env)
        out = git(repo, "-c", "core.abbrev=7", "-c", "diff.noprefix=false", "format-patch", "-1", "--stdout",
                  "--zero-commit", "--no-signature", "--stat=72", env=env)
    lines = out.splitlines(keepends=True)
    start = lines.index("---\n")
    return "".join(lines[start + 1:])


def main():
    ap = argparse.ArgumentParser(description="Keep the new-file patches of a series equal to their files.")
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--gen", help="folder of the generated sources (gen:NAME)")
    ap.add_argument("--hint", help="the command that rewrites the patches (said when --check fails)")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--write", action="store_true")
    args = ap.parse_args()
    try:
        stale = []
        for patch, files in read_manifest(args.manifest, args.gen).items():
            want = patch_header(patch) + diff_part(files)
            with open(patch, encoding="utf-8") as f:
                have = f.read()
            if have == want:
                continue
            stale.append(patch)
            if args.write:
                with open(patch, "w", encoding="utf-8") as f:
                    f.write(want)
                print(f"series_files: rewrote {os.path.relpath(patch)}")
    except (SeriesError, subprocess.CalledProcessError, OSError) as e:
        print(f"series_files: error: {e}", file=sys.stderr)
        return 2
    if stale and args.check:
        for p in stale:
            print(f"series_files: {os.path.relpath(p)} differs from the files it adds", file=sys.stderr)
        print("series_files: rewrite them with: " + (args.hint or f"{sys.argv[0]} --manifest {args.manifest}"
              f"{' --gen ' + args.gen if args.gen else ''} --write"), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
