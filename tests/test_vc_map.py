"""hdl.router.classes.VCMap: which output VCs each input VC can hold. With the separable VA an
ejecting head asks for one local VC (`separable_eject_vc`), so its input VC holds only that one of
each local port; the network output VCs are the central VA's."""
import pytest

from hdl.router.classes import UP_INPUT, VCMap, class_of_vc, separable_eject_vc


@pytest.mark.parametrize("R,p,V,C,uturns", [(3, 2, 4, 3, True), (7, 1, 4, 3, False), (4, 3, 2, 2, False)])
def test_separable_holds_one_local_vc_per_local_port(R, p, V, C, uturns):
    P = R + p
    vc_class = [class_of_vc(w, V, C) for w in range(V)]
    steps = [[1] * R for _ in range(R)]
    central = VCMap(R, P, V, C, vc_class, steps, uturns)
    sep = VCMap(R, P, V, C, vc_class, steps, uturns, separable=True)
    for iv in range(P * V):
        assert [ow for ow in sep.ovcs_of[iv] if ow[0] < R] == [ow for ow in central.ovcs_of[iv] if ow[0] < R]
        assert [ow for ow in central.ovcs_of[iv] if ow[0] >= R] == [(R + e, w) for e in range(p) for w in range(V)]
        assert [ow for ow in sep.ovcs_of[iv] if ow[0] >= R] == [(R + e, separable_eject_vc(iv, V)) for e in range(p)]
    # the VCs of one input port ask for different local VCs: each local VC has one holder per port
    for e in range(p):
        for w in range(V):
            ports = [iv // V for iv, _ in sep.holders[(R + e, w)]]
            assert sorted(ports) == list(range(P))


@pytest.mark.parametrize("R,p,V,C,separable", [(3, 1, 2, 2, False), (4, 2, 5, 3, True), (7, 2, 5, 3, False)])
def test_up_steps_hold_what_any_constant_steps_hold(R, p, V, C, separable):
    """Class steps from the `up` input (the shared module with turn classes): an input VC can
    hold exactly the output VCs it could hold at some router, i.e. under some `up` value (step
    up[i] & up[o]), and each hop's classes are those of steps 0 and 1."""
    P = R + p
    vc_class = [class_of_vc(w, V, C) for w in range(V)]
    dyn = VCMap(R, P, V, C, vc_class, UP_INPUT, uturns=False, separable=separable)
    union = [set() for _ in range(P * V)]
    for up in range(1 << R):
        steps = [[up >> i & up >> o & 1 for o in range(R)] for i in range(R)]
        fixed = VCMap(R, P, V, C, vc_class, steps, uturns=False, separable=separable)
        for iv in range(P * V):
            union[iv] |= set(fixed.ovcs_of[iv])
            for o in range(R):
                assert fixed.next_class(iv, o) in dyn.next_classes(iv, o)
    assert [set(x) for x in dyn.ovcs_of] == union
    assert dyn.dynamic and any(len(dyn.next_classes(iv, o)) == 2 for iv in range(R * V) for o in range(R))
    with pytest.raises(ValueError):
        dyn.next_class(0, 1)          # a network input's class needs the step
