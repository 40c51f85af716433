"""The ratio tables the benchmark scripts print: markdown for docs/performance.md, or aligned text."""


def print_table(header, rows, markdown):
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
        for r in [header, *rows]:
            print("  ".join(str(x).ljust(w) for x, w in zip(r, widths, strict=True)))
    print()
