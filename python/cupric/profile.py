"""python -m cupric.profile script.py [args]: runs a script under cupric's profiler and writes its
table (stdout and <out>.txt), a Chrome/Perfetto trace (<out>.trace.json) and a roofline (<out>.png).

    python -m cupric.profile [--out PREFIX] [--sort-by total] [--group-by op] [--top N] script.py [args...]
"""

import argparse
import os
import runpy
import sys


def main(argv=None):
    import cupric as cu

    ap = argparse.ArgumentParser(prog="python -m cupric.profile", description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="prefix of the written files (default: the script's name)")
    ap.add_argument("--sort-by", default="total")
    ap.add_argument("--group-by", default="op", choices=("op", "kernel", "shape"))
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--no-roofline", action="store_true", help="skip the PNG (matplotlib not needed)")
    ap.add_argument("script")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    ns = ap.parse_args(argv)
    if not os.path.isfile(ns.script):
        ap.error(f"no such script: {ns.script}")
    prefix = ns.out or os.path.splitext(os.path.basename(ns.script))[0] + ".profile"
    sys.argv = [ns.script, *ns.args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(ns.script)))
    prof = cu.profiler.profile()
    with prof:
        try:
            runpy.run_path(ns.script, run_name="__main__")
        except SystemExit as e:
            if e.code not in (None, 0):
                print(f"cupric.profile: the script exited with {e.code}", file=sys.stderr)
    table = prof.table(sort_by=ns.sort_by, group_by=ns.group_by, top=ns.top)
    text = str(table)
    print(text)
    written = [prefix + ".txt", prof.export_chrome_trace(prefix + ".trace.json")]
    with open(written[0], "w") as f:
        f.write(text + "\n")
    if not ns.no_roofline:
        written.append(prof.roofline(prefix + ".png", group_by=ns.group_by))
    print("cupric.profile wrote " + ", ".join(written), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
