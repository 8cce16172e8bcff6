"""A small regular-expression-to-DFA compiler over an alphabet of character classes.

The tokenizer's grammar is written with these combinators over class ids (small integers), and
compiled once into a minimal deterministic automaton: a ``(states, classes)`` transition table
(-1 where the automaton dies) and an accepting flag per state. Running a DFA never backtracks,
so scanning is linear in what it reads.

>>> a, b = sym(0), sym(1)
>>> dfa = compile_dfa(cat(plus(a), opt(b)), classes=2)
>>> dfa.longest([0, 0, 1, 1])
3
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["DFA", "alt", "cat", "compile_dfa", "opt", "plus", "star", "sym"]

# An expression is a nested tuple: ("sym", frozenset), ("cat", a, b), ("alt", a, b), ("star", a).
Expr = tuple


def sym(*classes: int | Iterable[int]) -> Expr:
    """One character of any of ``classes``."""
    members: set[int] = set()
    for c in classes:
        members.update([c] if isinstance(c, int) else c)
    return ("sym", frozenset(members))


def cat(*parts: Expr) -> Expr:
    """The parts one after the other."""
    expr = parts[0]
    for part in parts[1:]:
        expr = ("cat", expr, part)
    return expr


def alt(*parts: Expr) -> Expr:
    """Any one of the parts."""
    expr = parts[0]
    for part in parts[1:]:
        expr = ("alt", expr, part)
    return expr


def star(part: Expr) -> Expr:
    """Zero or more."""
    return ("star", part)


def plus(part: Expr) -> Expr:
    """One or more."""
    return cat(part, star(part))


def opt(part: Expr) -> Expr:
    """Zero or one."""
    return alt(part, ("eps",))


@dataclass(frozen=True)
class DFA:
    """``trans[state, class]``: the next state or -1; ``accept[state]``; state 0 starts."""

    trans: np.ndarray  # int16 (states, classes)
    accept: np.ndarray  # bool (states,)

    def longest(self, classes: Sequence[int]) -> int:
        """Length of the longest accepted prefix of ``classes`` (0 when none)."""
        state, best = 0, 0
        for i, c in enumerate(classes):
            state = int(self.trans[state, c])
            if state < 0:
                break
            if self.accept[state]:
                best = i + 1
        return best


def compile_dfa(expr: Expr, classes: int) -> DFA:
    """The minimal DFA of ``expr`` over class ids ``0 .. classes - 1``."""
    nfa = _Nfa()
    start, end = nfa.build(expr)
    dfa_trans, dfa_accept = _determinize(nfa, start, end, classes)
    return _minimize(dfa_trans, dfa_accept, classes)


class _Nfa:
    """Thompson's construction: each state has epsilon edges and class-set edges."""

    def __init__(self) -> None:
        self.eps: list[list[int]] = []
        self.edges: list[list[tuple[frozenset[int], int]]] = []

    def state(self) -> int:
        self.eps.append([])
        self.edges.append([])
        return len(self.eps) - 1

    def build(self, expr: Expr) -> tuple[int, int]:
        kind = expr[0]
        s, e = self.state(), self.state()
        if kind == "sym":
            self.edges[s].append((expr[1], e))
        elif kind == "eps":
            self.eps[s].append(e)
        elif kind == "cat":
            s1, e1 = self.build(expr[1])
            s2, e2 = self.build(expr[2])
            self.eps[s] += [s1]
            self.eps[e1] += [s2]
            self.eps[e2] += [e]
        elif kind == "alt":
            for part in expr[1:]:
                ps, pe = self.build(part)
                self.eps[s].append(ps)
                self.eps[pe].append(e)
        elif kind == "star":
            ps, pe = self.build(expr[1])
            self.eps[s] += [ps, e]
            self.eps[pe] += [ps, e]
        else:
            raise ValueError(f"unknown expression {kind!r}")
        return s, e

    def closure(self, states: Iterable[int]) -> frozenset[int]:
        seen = set(states)
        stack = list(seen)
        while stack:
            for nxt in self.eps[stack.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return frozenset(seen)


def _determinize(nfa: _Nfa, start: int, end: int, classes: int):
    # Subset construction; each NFA state's epsilon closure is computed once.
    single = [nfa.closure([s]) for s in range(len(nfa.eps))]
    first = single[start]
    index = {first: 0}
    order = [first]
    trans: list[list[int]] = []
    i = 0
    while i < len(order):
        moved: list[set[int]] = [set() for _ in range(classes)]
        for s in order[i]:
            for members, t in nfa.edges[s]:
                for c in members:
                    moved[c].add(t)
        row = []
        for targets in moved:
            if not targets:
                row.append(-1)
                continue
            target = frozenset().union(*(single[t] for t in targets))
            if target not in index:
                index[target] = len(order)
                order.append(target)
            row.append(index[target])
        trans.append(row)
        i += 1
    accept = [end in states for states in order]
    return trans, accept


def _minimize(trans: list[list[int]], accept: list[bool], classes: int) -> DFA:
    # Moore's partition refinement; the dead state (-1) is its own block.
    block = [int(a) for a in accept]
    while True:
        signature = {}
        new_block = []
        for s, row in enumerate(trans):
            key = (block[s], tuple(block[t] if t >= 0 else -1 for t in row))
            new_block.append(signature.setdefault(key, len(signature)))
        if len(signature) == len(set(block)):
            break
        block = new_block
    # Renumber so the start state's block is 0.
    remap = {block[0]: 0}
    for b in block:
        remap.setdefault(b, len(remap))
    n = len(remap)
    table = np.full((n, classes), -1, dtype=np.int16)
    accepting = np.zeros(n, dtype=np.bool_)
    for s, row in enumerate(trans):
        b = remap[block[s]]
        accepting[b] = accept[s]
        table[b] = [remap[block[t]] if t >= 0 else -1 for t in row]
    return DFA(table, accepting)
