#!/usr/bin/env python3
"""Compares the outputs scripts/slurm-diff.sh collected from corral and
from Slurm, field by field, after normalising what legitimately differs
between two clusters run a few seconds apart: points in time, the digits
of durations, the work directories, process IDs and the host name.

    slurm-diff-compare.py OUTDIR CORRAL_CWD SLURM_CWD

OUTDIR holds corral/NNN.{cmd,out,err,rc} and slurm/NNN.{...}. Prints one
block per command that differs and a summary line; exits 0.
"""
import os
import re
import socket
import sys

DATE = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\b")
# squeue -l and sinfo -l start with the time of day, as ctime prints it.
CTIME = re.compile(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\b")
# Durations (time used, time left): their digits vary with when each side
# ran; their shape (M:SS, H:MM:SS, D-HH:MM:SS) is what is compared.
DUR = re.compile(r"(?<![\w.])(\d+-)?\d+:\d\d(:\d\d)?(?![\w.])")


# Jobs the corpus submits: their IDs part after the workload's array.
SUBMITTED = re.compile(r"^(Submitted batch job )\d+$|^\d+(;\w+)?$", re.M)


def norm(text, cwd, cmd=""):
    text = text.replace(cwd, "<CWD>")
    if cmd.startswith("sbatch") or cmd.startswith("printf"):
        text = SUBMITTED.sub(lambda m: (m.group(1) or "") + "<ID>", text)
    text = DATE.sub("<DATE>", text)
    text = CTIME.sub("<CTIME>", text)
    text = DUR.sub(lambda m: re.sub(r"\d", "N", m.group(0)), text)
    host = socket.gethostname().split(".")[0]
    text = re.sub(r"AllocNode:Sid=[^ \n]*", "AllocNode:Sid=<HOST>:<SID>", text)
    text = re.sub(r"\b%s\b" % re.escape(host), "<HOST>", text)
    return text


def read(base, ext):
    try:
        with open(base + "." + ext, encoding="utf-8", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def is_record(text):
    """scontrol's key=value records: most tokens hold a '='."""
    toks = text.split()
    return len(toks) > 3 and sum("=" in t for t in toks) * 2 > len(toks)


def record_pairs(text):
    """Splits scontrol records into one dict per record, keyed in order."""
    recs = []
    for block in re.split(r"\n\s*\n", text.strip()):
        d = {}
        for tok in re.findall(r"(\S+?)=((?:[^ \n]| (?![\w:/]+=))*)", block):
            key, val = tok
            d[key] = val.strip()
        if d:
            recs.append(d)
    return recs


def diff_records(c, s):
    lines = []
    rc, rs = record_pairs(c), record_pairs(s)
    if len(rc) != len(rs):
        lines.append("  records: corral %d, slurm %d" % (len(rc), len(rs)))
    for i, (a, b) in enumerate(zip(rc, rs)):
        for k in b:
            if k not in a:
                lines.append("  record %d: %s missing in corral (slurm %r)" % (i + 1, k, b[k]))
            elif a[k] != b[k]:
                lines.append("  record %d: %s: corral %r, slurm %r" % (i + 1, k, a[k], b[k]))
        for k in a:
            if k not in b:
                lines.append("  record %d: %s only in corral (%r)" % (i + 1, k, a[k]))
    return lines


def diff_lines(c, s):
    lines = []
    lc, ls = c.splitlines(), s.splitlines()
    for i in range(max(len(lc), len(ls))):
        a = lc[i] if i < len(lc) else None
        b = ls[i] if i < len(ls) else None
        if a == b:
            continue
        if a is None or b is None:
            lines.append("  line %d: corral %r, slurm %r" % (i + 1, a, b))
            continue
        fa, fb = a.split(), b.split()
        if fa == fb:
            lines.append("  line %d: spacing: corral %r, slurm %r" % (i + 1, a, b))
            continue
        fields = []
        for j in range(max(len(fa), len(fb))):
            x = fa[j] if j < len(fa) else "-"
            y = fb[j] if j < len(fb) else "-"
            if x != y:
                fields.append("field %d corral %r slurm %r" % (j + 1, x, y))
        lines.append("  line %d: %s" % (i + 1, "; ".join(fields)))
        lines.append("      corral %r" % a)
        lines.append("      slurm  %r" % b)
    return lines


def main():
    out, ccwd, scwd = sys.argv[1:4]
    ids = sorted(f[:-4] for f in os.listdir(os.path.join(out, "corral")) if f.endswith(".cmd"))
    same = 0
    for i in ids:
        cb, sb = os.path.join(out, "corral", i), os.path.join(out, "slurm", i)
        cmd = read(cb, "cmd").strip()
        report = []
        crc, src = read(cb, "rc").strip(), read(sb, "rc").strip()
        if crc != src:
            report.append("  exit status: corral %s, slurm %s" % (crc, src))
        for ext, what in (("out", "stdout"), ("err", "stderr")):
            c, s = norm(read(cb, ext), ccwd, cmd), norm(read(sb, ext), scwd, cmd)
            if c == s:
                continue
            if ext == "out" and is_record(s) and is_record(c):
                d = diff_records(c, s)
            else:
                d = diff_lines(c, s)
            if d:
                report.append(" %s:" % what)
                report.extend(d)
        if report:
            print("== %s  [%s]" % (cmd, i))
            print("\n".join(report))
        else:
            same += 1
    print("\n%d of %d commands print the same on both sides" % (same, len(ids)))


if __name__ == "__main__":
    main()
