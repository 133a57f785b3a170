"""VC classes of the router (docs/microarchitecture.md, "VC classes"): which VCs each class owns and
the class of a head's next hop. Constants of a router, used when its stages are built."""
from __future__ import annotations


def vc_classes_for(routing, vcs: int) -> int:
    """C of the contract: the routing's default VC count (its proven route length), capped at V."""
    return min(int(vcs), max(1, int(routing.default_vcs())))


def class_of_vc(w: int, vcs: int, classes: int) -> int:
    """The class owning VC w: class c owns [c·k, c·k+k), k = V // C; the last class the rest."""
    k = vcs // classes
    return min(w // k, classes - 1)


def input_class(i: int, v_class: int, ports: int, classes: int, step: int = 1) -> int:
    """The class of the next hop of a head at an input VC of class `v_class` of input port i
    (docs/microarchitecture.md, VC classes): 0 at a local port (i >= ports), else `step` classes
    above the class of its VC, capped at C - 1. `step` is the VC policy's class step from port i to the output port
    (`Routing.class_steps`): always 1 for hop classes, where a head that kept the contract arrives
    with h hops on a VC of class min(h-1, C-1) and this is min(h, C-1); 1 at a down-then-up turn
    for turn classes. Being a constant per (input VC, output port), it prunes each output VC's
    VA arbiter to the input VCs that can ask for it."""
    return 0 if i >= ports else min(v_class + step, classes - 1)


# class_step of a router whose class steps come from its `up` input (turn classes in the shared
# router module): bit k of `up` says the router on network port k has a larger id than this one,
# and the step from input port i to output port o is up[i] & up[o] (a down-then-up turn:
# `TurnVC.class_step`), where a router with a constant id has them as constants
UP_INPUT = "up"


def separable_eject_vc(iv: int, vcs: int) -> int:
    """The local VC an ejecting head of input VC iv = i·V + v asks for with the separable VA,
    free or not: (i + v) mod V. The VCs of one input port ask for different local VCs, so the
    VA's launch (one request per port and output VC) never holds one back behind another, and
    each local VC's arbiter has one asker per input port (docs/microarchitecture.md)."""
    i, v = divmod(iv, vcs)
    return (i + v) % vcs


class VCMap:
    """Which output VCs each input VC can hold, for a router of R network ports and P ports of V
    VCs in C classes (`vc_class[w]`: the class of VC w; `class_step[i][o]`: the VC policy's step).
    uturns=False: a head that came in by network port i never leaves by port i (minimal routing),
    so no input VC of port i holds an output VC of port i. separable=True (the separable VA): an
    ejecting head asks for one local VC, `separable_eject_vc`, so that is the only one of each
    local port its input VC can hold; the others are left out of its allocation state and of
    their arbiters (synthesis cannot see that they are never granted). class_step = UP_INPUT: the
    steps are the router's `up` input's (a hop of a network input VC may take either class,
    `next_classes`), known only in hardware; ovcs_of holds the output VCs of both.

    Attributes: `ovcs_of[iv]`, the output VCs (o, w) input VC iv = i·V + v can hold (the local
    ones above, and the network ones of the class of its hop through that output), in (o, w) order;
    `holders[(o, w)]`, the (iv, k) with ovcs_of[iv][k] == (o, w)."""

    def __init__(self, R: int, P: int, V: int, C: int, vc_class, class_step, uturns: bool = True,
                 separable: bool = False):
        self.R, self.P, self.V, self.C = R, P, V, C
        self.vc_class, self.class_step = list(vc_class), class_step
        self.dynamic = class_step == UP_INPUT

        def holds(iv, o, w):
            if o >= R:
                return not separable or w == separable_eject_vc(iv, V)
            return self.vc_class[w] in self.next_classes(iv, o) and (uturns or o != iv // V)
        self.ovcs_of = [[(o, w) for o in range(P) for w in range(V) if holds(iv, o, w)] for iv in range(P * V)]
        self.holders = {}
        for iv, ovcs in enumerate(self.ovcs_of):
            for k, ow in enumerate(ovcs):
                self.holders.setdefault(ow, []).append((iv, k))

    def next_class(self, iv: int, o: int, step: int | None = None) -> int:
        """The class of the hop of input VC iv's head through network output o (with `up`
        steps: when the step is `step`)."""
        i, v = divmod(iv, self.V)
        if i < self.R and step is None:
            if self.dynamic:
                raise ValueError("class steps from the `up` input: say which step")
            step = self.class_step[i][o]
        return input_class(i, self.vc_class[v], self.R, self.C, step if i < self.R else 0)

    def next_classes(self, iv: int, o: int) -> tuple[int, ...]:
        """The classes the hop of input VC iv through network output o may take: one, or with
        `up` steps those of step 0 and 1 at a network input (one where both are capped)."""
        if not self.dynamic:
            return (self.next_class(iv, o),)
        if iv // self.V >= self.R:
            return (self.next_class(iv, o, 0),)
        return tuple(sorted({self.next_class(iv, o, 0), self.next_class(iv, o, 1)}))


__all__ = ["UP_INPUT", "VCMap", "class_of_vc", "input_class", "separable_eject_vc", "vc_classes_for"]
