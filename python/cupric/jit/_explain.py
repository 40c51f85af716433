"""f.explain(*args): which ops of a jit function run in which kernel, and why the others run
eagerly. An Explanation prints as a short report and keeps the facts as data for tests."""


class Explanation:
    """`kernels`: one dict per step in order ({'kind': 'map' | 'rows' | 'eager', 'ops': [labels],
    'lines': [file:line], 'why': reason for eager steps}); `eager_reason`: why the whole
    function runs eagerly, or None."""

    def __init__(self, name, steps, eager_reason=None):
        self.name, self.steps, self.eager_reason = name, steps, eager_reason

    @property
    def kernels(self):
        return [s for s in self.steps if s["kind"] != "eager"]

    @property
    def eager(self):
        return [s for s in self.steps if s["kind"] == "eager"]

    def __str__(self):
        if self.eager_reason is not None:
            return f"jit {self.name}: runs eagerly (not traced): {self.eager_reason}"
        lines = [f"jit {self.name}: {len(self.kernels)} kernel(s), {len(self.eager)} eager op(s)"]
        k = 0
        for s in self.steps:
            if s["kind"] == "eager":
                lines.append(f"  eager   {s['ops'][0]} at {s['lines'][0]}: {s['why']}")
            else:
                k += 1
                lines.append(f"  kernel {k} ({s['kind']}): {', '.join(s['ops'])}")
        return "\n".join(lines)

    __repr__ = __str__


def explain_program(name, program):
    nodes = program.graph.nodes
    steps = []
    for step in program.steps:
        if step.kind == "eager":
            n = nodes[step.node]
            steps.append({"kind": "eager", "ops": [n.label()], "lines": [n.at()], "why": n.why})
        else:
            ops = [nodes[i].label() for i in step.fused if nodes[i].kind not in ("input", "scalar", "const")]
            steps.append({"kind": step.kind, "ops": ops, "lines": [nodes[i].at() for i in step.fused], "why": None})
    return Explanation(name, steps)
