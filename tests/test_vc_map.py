"""hdl.router.classes.VCMap: which output VCs each input VC can hold. With the separable VA an
ejecting head asks for one local VC (`separable_eject_vc`), so its input VC holds only that one of
each local port; the network output VCs are the central VA's."""
import pytest

from hdl.router.classes import VCMap, class_of_vc, separable_eject_vc


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
