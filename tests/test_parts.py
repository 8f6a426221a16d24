import itertools

import jax
import pytest

from ocolearn.learners import Learner
from ocolearn.losses import Loss
from ocolearn.mirror_maps import MirrorMap
from ocolearn.parts import Part
from ocolearn.projections import Projection
from ocolearn.schedules import Schedule

FAMILIES = [Loss, Schedule, Projection, MirrorMap, Learner]


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.__name__)
def test_different_parts_have_different_tree_structures(family):
    # jit caches programs by tree structure: two kinds of part must never share one.
    parts = [cls() for name, cls in family.registry.items() if name != "optax"]
    for a, b in itertools.combinations(parts, 2):
        assert jax.tree.structure(a) != jax.tree.structure(b), (a, b)


def test_round_trip_and_key_paths():
    from ocolearn import OGD, InvSqrt, L2Ball, Squared

    learner = OGD(Squared(), InvSqrt(0.5), L2Ball(2.0))
    leaves, tree = jax.tree.flatten(learner)
    assert leaves == [0.5, 2.0] and jax.tree.unflatten(tree, leaves) == learner
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(learner)[0]]
    assert paths == [".schedule.eta", ".projection.radius"]
    assert isinstance(learner, Part) and learner.replace(loss=Squared()) == learner
