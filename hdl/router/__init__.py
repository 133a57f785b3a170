"""The router (docs/microarchitecture.md) as stage components: `router.Router` composes
`input_unit`, `vc_allocator`, `switch_allocator`, `switch_traversal` and `output_unit`."""
from .classes import class_of_vc, input_class, vc_classes_for
from .output_unit import credit_signature
from .router import FLIT_FIELDS, Router, RouterShape, flit_signature, running_count

__all__ = ["FLIT_FIELDS", "Router", "RouterShape", "class_of_vc", "credit_signature", "flit_signature", "input_class",
           "running_count", "vc_classes_for"]
