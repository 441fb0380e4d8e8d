"""Dataflow graphs of the book's models: which arrays feed which, with their shapes.

A graph is plain data. Its nodes are arrays (a name, a shape, a legend role such as
"q" for queries) and its ops say how one array is made from others and from
parameters ("Q is E times W_Q"). Each model builds its graph from one real forward
pass (`onehead.dataflow`, `encdec.dataflow`, `decoder_stack.dataflow`): every shape
is read off an array the pass produced, and building re-evaluates every op on the
pass's own input arrays and insists that it reproduces the pass's output array. So a
diagram drawn from a graph cannot drift from the model: if the wiring or a shape
changes, building the graph fails and names the op.

Graphs can be simplified for a picture without losing that guarantee: `collapse`
merges a set of nodes (a head, a block, the chain scores -> mask -> softmax) into one
node, keeping the arrows that enter and leave it. The figure code (`bookfigures`)
draws any graph; the engine knows nothing about drawing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from . import nn

ROLES = ("e", "q", "k", "v", "a", "d", "p")  # the book's legend (bookfigures.palette.ROLE_COLORS)


@dataclass(frozen=True)
class Param:
    """A parameter an op reads (drawn on the arrow, not as a box): name and shape."""

    name: str
    shape: tuple[int, ...]


@dataclass(frozen=True)
class Node:
    """One array of the forward pass.

    `role` is a legend role (e input rows, q, k, v, a weights, d updates, p updated rows)
    or None for arrays outside the legend (token ids, logits, probabilities, the loss).
    `group` names a cluster drawn around related nodes (a block, a head); `lane` puts
    nodes in a column of their own (the English and the French side of a translator).
    """

    id: str
    label: str
    shape: tuple[int, ...]
    role: str | None = None
    group: str | None = None
    lane: str | None = None

    @property
    def shape_text(self) -> str:
        """The shape as the book writes it: "10 × 4", a scalar as "scalar"."""
        return " × ".join(str(n) for n in self.shape) if self.shape else "scalar"


@dataclass(frozen=True)
class Op:
    """How `output` is made from `inputs` (node ids) and `params`; `label` is what the arrow says."""

    kind: str
    inputs: tuple[str, ...]
    output: str
    label: str
    params: tuple[Param, ...] = ()


@dataclass(frozen=True)
class Edge:
    """One arrow of a drawing: an input node of an op to its output node."""

    source: str
    target: str
    op: Op


@dataclass(frozen=True)
class Dataflow:
    """A model's forward pass as data: nodes in the order they were made, and the ops."""

    title: str
    nodes: tuple[Node, ...]
    ops: tuple[Op, ...]

    def node(self, node_id: str) -> Node:
        """The node with this id (KeyError names the graph's ids)."""
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(f"no node {node_id!r} in {self.title!r}; nodes: {[n.id for n in self.nodes]}")

    def producer(self, node_id: str) -> Op | None:
        """The op that makes this node, or None for an input of the graph."""
        return next((op for op in self.ops if op.output == node_id), None)

    def consumers(self, node_id: str) -> list[Op]:
        """The ops that read this node."""
        return [op for op in self.ops if node_id in op.inputs]

    @property
    def sources(self) -> list[Node]:
        """Nodes no op makes: what the pass starts from (token ids)."""
        return [n for n in self.nodes if self.producer(n.id) is None]

    @property
    def sinks(self) -> list[Node]:
        """Nodes no op reads: what the pass ends with (probabilities, the loss)."""
        return [n for n in self.nodes if not self.consumers(n.id)]

    def edges(self) -> list[Edge]:
        """Every arrow: one per (input, op) pair, in the order the ops ran."""
        return [Edge(src, op.output, op) for op in self.ops for src in op.inputs]

    def params(self) -> list[Param]:
        """Every parameter the graph's ops read, once each, in order of first use."""
        seen: dict[str, Param] = {}
        for op in self.ops:
            for p in op.params:
                seen.setdefault(p.name, p)
        return list(seen.values())

    def collapse(self, ids: Iterable[str], *, into: str, label: str, role: str | None = None,
                 op_label: str | None = None, group: str | None = None) -> Dataflow:
        """Merge `ids` into one node `into`; arrows entering and leaving the set are kept.

        The merged node takes the shape of the set's one output (the member read from
        outside the set, or the set's last member); the arrows that enter it become one
        op labelled `op_label` (default: the labels of the merged ops joined by " → ").
        A set with two outputs is refused: one box cannot stand for two arrays.
        """
        members = set(ids)
        missing = members - {n.id for n in self.nodes}
        if missing or not members:
            raise KeyError(f"collapse: no such nodes {sorted(missing)} in {self.title!r}")
        outputs = [n for n in self.nodes if n.id in members
                   and any(n.id in op.inputs and op.output not in members for op in self.ops)]
        if len(outputs) > 1:
            raise ValueError(f"collapse: {sorted(o.id for o in outputs)} are all read from outside; "
                             "one node cannot stand for several arrays")
        inside = [n for n in self.nodes if n.id in members]
        out = outputs[0] if outputs else inside[-1]
        first = inside[0]
        merged = Node(into, label, out.shape, role if role is not None else out.role,
                      group if group is not None else first.group, first.lane)
        internal = [op for op in self.ops if op.output in members]
        inputs = tuple(dict.fromkeys(i for op in internal for i in op.inputs if i not in members))
        nodes, placed = [], False
        for n in self.nodes:
            if n.id in members:
                if not placed:
                    nodes.append(merged)
                    placed = True
            else:
                nodes.append(n)
        ops: list[Op] = []
        params = tuple(dict.fromkeys(p for op in internal for p in op.params))
        text = op_label if op_label is not None else " → ".join(op.label for op in internal if op.label)
        joined = Op("collapsed", inputs, into, text, params)
        placed = False
        for op in self.ops:
            if op.output in members:
                if not placed and inputs:
                    ops.append(joined)
                    placed = True
                continue
            ops.append(replace(op, inputs=tuple(into if i in members else i for i in op.inputs)))
        return Dataflow(self.title, tuple(nodes), tuple(ops))

    def collapse_prefix(self, prefix: str, **kwargs: Any) -> Dataflow:
        """`collapse` every node whose id starts with `prefix` (a head, a block)."""
        return self.collapse([n.id for n in self.nodes if n.id.startswith(prefix)], **kwargs)

    def only(self, ids: Iterable[str], title: str | None = None) -> Dataflow:
        """The part of the graph made of `ids`, plus the nodes that feed it from outside."""
        keep = set(ids)
        ops = [op for op in self.ops if op.output in keep]
        keep |= {i for op in ops for i in op.inputs}
        nodes = tuple(n for n in self.nodes if n.id in keep)
        return Dataflow(title or self.title, nodes, tuple(ops))

    def describe(self) -> str:
        """The graph in words, one sentence per op, e.g. for a diagram's alt text."""
        def name(node_id: str) -> str:
            n = self.node(node_id)
            return f"{n.label} ({n.shape_text})"

        starts = ", ".join(name(n.id) for n in self.sources)
        steps = [f"{name(op.output)} from {' and '.join(name(i) for i in op.inputs)} by {op.label}"
                 for op in self.ops]
        return f"Starting from {starts}: " + "; ".join(steps) + "."

    def to_dict(self) -> dict:
        """Plain data (lists, strings, ints), e.g. to export beside a page or to compare in tests."""
        return {
            "title": self.title,
            "nodes": [{"id": n.id, "label": n.label, "shape": list(n.shape), "role": n.role,
                       "group": n.group, "lane": n.lane} for n in self.nodes],
            "ops": [{"kind": op.kind, "inputs": list(op.inputs), "output": op.output, "label": op.label,
                     "params": [{"name": p.name, "shape": list(p.shape)} for p in op.params]}
                    for op in self.ops],
        }


# --- what each kind of op computes, used to check a graph against its forward pass ---

Evaluator = Callable[[list[np.ndarray], list[np.ndarray], Mapping[str, Any]], np.ndarray]


def _scores(ins, params, const):
    q, k = ins
    return q @ k.T / np.sqrt(q.shape[1])


def _cross_entropy(ins, params, const):
    return np.asarray(nn.cross_entropy_forward(ins[0], const["targets"])[0])


EVALUATORS: dict[str, Evaluator] = {
    "lookup": lambda ins, p, c: p[0][np.asarray(ins[0], dtype=int)],
    "embed": lambda ins, p, c: p[0][np.asarray(ins[0], dtype=int)] + p[1][: len(ins[0])],
    "positions": lambda ins, p, c: p[0][c.get("start", 0): c.get("start", 0) + len(ins[0])],
    "add": lambda ins, p, c: sum(ins[1:], ins[0]),
    "matmul": lambda ins, p, c: ins[0] @ p[0],
    "linear": lambda ins, p, c: ins[0] @ p[0] + (p[1] if len(p) > 1 else 0.0),
    "readout_tied": lambda ins, p, c: ins[0] @ p[0].T,
    "scores": _scores,
    "mask": lambda ins, p, c: np.where(c["mask"], ins[0], -np.inf),
    "softmax": lambda ins, p, c: nn.softmax(ins[0]),
    "mix": lambda ins, p, c: ins[0] @ ins[1],
    "rows": lambda ins, p, c: ins[0][c["rows"]],
    "concat": lambda ins, p, c: np.concatenate(ins, axis=1),
    "relu": lambda ins, p, c: np.maximum(ins[0], 0.0),
    "mlp": lambda ins, p, c: nn.mlp_forward(ins[0], *p)[0],
    "ffn": lambda ins, p, c: nn.ffn_forward(ins[0], *p)[0],
    "layernorm": lambda ins, p, c: nn.layernorm_forward(ins[0], *p)[0],
    "cross_entropy": _cross_entropy,
}


class GraphMismatch(AssertionError):
    """A graph's op does not reproduce the forward pass's array: the picture would lie."""


@dataclass
class DataflowBuilder:
    """Record a forward pass's arrays and ops; `build()` checks them and returns the graph.

        g = DataflowBuilder("one attention head")
        g.array("E", out["E"], "input rows E", role="e")
        g.array("Q", out["Q"], "queries Q", role="q")
        g.op("matmul", ["E"], "Q", "× W_Q", params={"W_Q": params["W_Q"]})
        graph = g.build()   # raises GraphMismatch if E @ W_Q is not out["Q"]
    """

    title: str
    group: str | None = None  # applied to arrays added while set (see `grouped`)
    lane: str | None = None
    _nodes: list[Node] = field(default_factory=list)
    _values: dict[str, np.ndarray] = field(default_factory=dict)
    _ops: list[tuple[Op, list[np.ndarray], dict[str, Any]]] = field(default_factory=list)

    def array(self, node_id: str, value: Any, label: str, role: str | None = None, **where: str | None) -> str:
        """Add an array of the pass (its shape is read from `value`); returns its id."""
        if node_id in self._values:
            raise ValueError(f"node {node_id!r} added twice")
        if role is not None and role not in ROLES:
            raise ValueError(f"role {role!r} is not one of the legend's roles {ROLES}")
        value = np.asarray(value)
        group = where.get("group", self.group)
        lane = where.get("lane", self.lane)
        self._nodes.append(Node(node_id, label, tuple(int(n) for n in value.shape), role, group, lane))
        self._values[node_id] = value
        return node_id

    @contextmanager
    def grouped(self, group: str | None = None, lane: str | None = None) -> Iterator[None]:
        """Arrays added inside the block belong to `group` (and `lane`, when given)."""
        saved = self.group, self.lane
        self.group = group
        self.lane = lane if lane is not None else self.lane
        try:
            yield
        finally:
            self.group, self.lane = saved

    def op(self, kind: str, inputs: Sequence[str], output: str, label: str,
           params: Mapping[str, Any] | None = None, **const: Any) -> None:
        """Record that `output` = kind(inputs, params); `const` holds non-array settings (mask, rows)."""
        if kind not in EVALUATORS:
            raise ValueError(f"unknown op kind {kind!r}; known: {sorted(EVALUATORS)}")
        for node_id in [*inputs, output]:
            if node_id not in self._values:
                raise KeyError(f"op {kind!r} refers to {node_id!r}, which was not added with array()")
        if any(op.output == output for op, _, _ in self._ops):
            raise ValueError(f"{output!r} is made by two ops")
        arrays = [np.asarray(v) for v in (params or {}).values()]
        shapes = tuple(Param(name, tuple(int(n) for n in a.shape)) for name, a in zip(params or {}, arrays))
        self._ops.append((Op(kind, tuple(inputs), output, label, shapes), arrays, dict(const)))

    def build(self) -> Dataflow:
        """The graph, after checking every op against the recorded arrays."""
        for op, arrays, const in self._ops:
            got = EVALUATORS[op.kind]([self._values[i] for i in op.inputs], arrays, const)
            want = self._values[op.output]
            if np.shape(got) != np.shape(want) or not np.allclose(got, want, rtol=1e-10, atol=1e-12):
                raise GraphMismatch(
                    f"{self.title}: op {op.kind} ({op.label}) from {list(op.inputs)} does not reproduce "
                    f"{op.output!r} of the forward pass (shape {np.shape(got)} vs {np.shape(want)})"
                )
        return Dataflow(self.title, tuple(self._nodes), tuple(op for op, _, _ in self._ops))

    def attention(self, prefix: str, x_q: str, x_kv: str, view: Mapping[str, np.ndarray],
                  projections: Mapping[str, np.ndarray], *, param_prefix: str = "",
                  mask: np.ndarray | None = None, mask_label: str = "mask") -> str:
        """The arrays and ops of one attention head: Q, K, V, scores, [masked scores], weights, message.

        `view` holds the head's intermediates as `nn.head_forward` caches them and
        `projections` its "W_Q", "W_K", "W_V"; parameters are recorded as
        `param_prefix + "W_Q"` and so on. Node ids start with `prefix`. Returns the message id.
        """
        d_k = view["Q"].shape[1]
        self.array(prefix + "Q", view["Q"], "queries Q", "q")
        self.array(prefix + "K", view["K"], "keys K", "k")
        self.array(prefix + "V", view["V"], "values V", "v")
        for node, source in (("Q", x_q), ("K", x_kv), ("V", x_kv)):
            w = f"W_{node}"
            self.op("matmul", [source], prefix + node, f"× {w}", {param_prefix + w: projections[w]})
        # scores and the message have no colour in the book's legend (Notation), so no role
        self.array(prefix + "scores", view["scores"], "scores")
        self.op("scores", [prefix + "Q", prefix + "K"], prefix + "scores", f"Q Kᵀ / √{d_k}")
        weights_from = prefix + "scores"
        if mask is not None:
            self.array(prefix + "masked", view["masked_scores"], "masked scores")
            self.op("mask", [prefix + "scores"], prefix + "masked", mask_label, mask=mask)
            weights_from = prefix + "masked"
        self.array(prefix + "weights", view["weights"], "weights A", "a")
        self.op("softmax", [weights_from], prefix + "weights", "softmax")
        self.array(prefix + "message", view["message"], "message A V")
        self.op("mix", [prefix + "weights", prefix + "V"], prefix + "message", "A V")
        return prefix + "message"
