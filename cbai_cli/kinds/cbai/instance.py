"""CBAI instances: the file format, validation and the learner's view.

A CBAI problem (paper Definition 1) is a finite arm set X ⊂ R^d, a known reward
(θ, or one known value per arm), a hidden constraint parameter φ and a threshold τ;
arm x is feasible iff φᵀx ≤ τ. A file may hold all of it, including the hidden truth φ
that the simulator uses to answer queries and to score answers; a file without
``constraint`` describes a real problem, whose answers come from people or trials.
:class:`Instance` mirrors the file exactly (so YAML ↔ NPZ round trips are exact);
:meth:`Instance.problem` is what an algorithm may see and :meth:`Instance.truth` what only
the environment and the scoring may see (:meth:`Instance.require_truth` refuses, in one
line, when the file has none).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from cbai_cli.contracts.errors import InstanceError, MissingTruthError
from cbai_cli.contracts.read_only import ReadOnlyWhenUnpickled
from cbai_cli.io.files import instance_errors, read_mapping, write_mapping
from cbai_cli.kinds.cbai.noise import BinaryNoise, GaussianNoise, NoiseModel
from cbai_cli.kinds.cbai.questions import feasible_threshold
from cbai_cli.contracts.validation import (NORM_TOL, FieldError, array, flag, moderate, numbers, positive, real, replace_field,
                                 safe_text, text)

SCHEMA_VERSION = 1
KIND = "cbai"
_FIELDS = (
    "schema_version",
    "kind",
    "name",
    "arms",
    "reward",
    "reward_values",
    "constraint",
    "threshold",
    "threshold_known",
    "noise",
    "constraint_norm_bound",
    "meta",
    "data",
)
# How the arms field is described when it is not an array of rows.
ARMS_SHAPE = "a K×d array of numbers (a list of equal-length rows)"
# An arm counts as "on the boundary" (g(x) = 0) when |g(x)| is within this fraction of the
# magnitudes that make it, |x|ᵀ|φ| + |τ|: relative, so that the instance's units (arms and
# threshold scaled together) do not decide it; about 4,500 ulps of round-off.
BOUNDARY_TOLERANCE = 1e-12
# A stated threshold agrees with the one meta.feasible_when gives within this fraction of
# their magnitudes: round-off of a τ written out in decimal.
THRESHOLD_AGREEMENT = 1e-12


class _FromMeta:
    """The default of :attr:`Instance.threshold`: τ from ``meta.feasible_when``, else 0."""

    def __repr__(self) -> str:
        return "<meta.feasible_when, else 0>"


_FROM_META: Any = _FromMeta()


@dataclass(frozen=True)
class Problem(ReadOnlyWhenUnpickled):
    """What a learner knows: arms, their rewards, the threshold, the noise model.

    Attributes:
        arms: (K, d) arm features, with the constant feature appended when the
            threshold is unknown (Lindner et al. 2022, §2: a constant feature folds τ into φ).
        rewards: (K,) known reward of every arm.
        threshold: τ of the learner's problem (0 when the threshold was folded in).
        noise: the observation noise model (its parameters are public).
        constraint_norm_bound: S ≥ ‖φ‖ if the instance states one.
    """

    arms: np.ndarray
    rewards: np.ndarray
    threshold: float
    noise: NoiseModel
    constraint_norm_bound: float | None = None

    @property
    def n_arms(self) -> int:
        return self.arms.shape[0]

    @property
    def dim(self) -> int:
        return self.arms.shape[1]


@dataclass(frozen=True)
class Truth(ReadOnlyWhenUnpickled):
    """The hidden constraint: φ in the learner's coordinates, and the noise."""

    constraint: np.ndarray
    threshold: float
    noise: NoiseModel

    def means(self, arms: np.ndarray) -> np.ndarray:
        """φᵀx for every row of ``arms`` (K, d): the mean observation of each arm."""
        return arms @ self.constraint

    def gaps(self, arms: np.ndarray) -> np.ndarray:
        """g(x) = φᵀx − τ for every arm; feasible iff g(x) ≤ 0."""
        return self.means(arms) - self.threshold


@dataclass(frozen=True, eq=False)
class Instance(ReadOnlyWhenUnpickled):
    """One CBAI instance file (``kind: cbai``), validated.

    The constructor checks every field as :func:`from_mapping` does (one line ``FIELD:
    RULE``, an :class:`InstanceError`) and keeps read-only copies of the arrays and a plain
    copy of ``meta``, so a built instance never changes.

    Attributes:
        name: a label.
        arms: (K, d) arm features as written in the file.
        constraint: (d,) φ, the hidden truth; None for a real problem, whose answers
            come from outside (:attr:`has_truth`).
        reward: (d,) θ, or None when ``reward_values`` is given instead.
        reward_values: (K,) one known reward per arm, or None when θ is given.
        threshold: τ; left out, τ is the one ``meta.feasible_when`` states in the raters' terms
            (:func:`cbai_cli.kinds.cbai.questions.feasible_threshold`), else 0. Given with
            ``feasible_when``, the two must agree.
        threshold_known: False folds τ into a constant feature for the learner.
        noise: Gaussian(σ) or binary feedback.
        constraint_norm_bound: optional S ≥ ‖φ‖ (in the learner's coordinates).
        meta: free mapping (generator, parameters, seed); ``question``, ``answers`` and
            ``feasible_when`` say what a study asks (:mod:`cbai_cli.kinds.cbai.questions`) and are
            checked here.
        data: named arrays that travel with the instance but play no part in the
            problem (e.g. a driver instance's action sequences and raw features).
        source: where the instance was read from, for messages; not part of the file.
        guessed_constraint: whether ``constraint`` is a guess put in for a real problem's
            missing truth (:meth:`with_guessed_constraint`), so that bounds and simulated
            runs are for that guess and say so; not part of the file.
    """

    name: str
    arms: np.ndarray
    constraint: np.ndarray | None
    reward: np.ndarray | None = None
    reward_values: np.ndarray | None = None
    threshold: float = _FROM_META
    threshold_known: bool = True
    noise: NoiseModel = field(default_factory=lambda: GaussianNoise(0.05))
    constraint_norm_bound: float | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    data: Mapping[str, np.ndarray] = field(default_factory=dict)
    source: str | None = field(default=None, repr=False)
    guessed_constraint: bool = False
    # The file's ``kind`` (cbai_cli.kinds dispatches on it); not a field of the dataclass.
    kind: ClassVar[str] = KIND

    def __post_init__(self) -> None:
        """Check every field as a file's is checked and store the checked copies: the instance
        owns read-only copies of its arrays, so neither the caller's objects nor a reader of
        the instance can change it."""
        with instance_errors():
            replace_field(self, "name", text(self.name, "name"))
            for name in ("arms", "constraint", "reward", "reward_values"):
                value = getattr(self, name)
                if name == "arms" or value is not None:
                    replace_field(self, name, _array(value, name))
            if self.threshold is not _FROM_META:
                replace_field(self, "threshold", moderate(real(self.threshold, "threshold"), "threshold"))
            replace_field(self, "threshold_known", flag(self.threshold_known, "threshold_known"))
            replace_field(self, "guessed_constraint", flag(self.guessed_constraint, "guessed_constraint"))
            if self.guessed_constraint and self.constraint is None:
                raise FieldError("guessed_constraint", "needs a constraint (the guess)")
            if not isinstance(self.noise, (GaussianNoise, BinaryNoise)):
                raise FieldError("noise", f"must be a noise model, GaussianNoise(sigma) or BinaryNoise(), got {self.noise!r}")
            if self.constraint_norm_bound is not None:
                replace_field(self, "constraint_norm_bound", positive(self.constraint_norm_bound, "constraint_norm_bound"))
            replace_field(self, "meta", plain_meta(self.meta))
            self._settle_threshold()
            data = mapping_value(self.data, "data", "a mapping of names to arrays")
            replace_field(self, "data", {str(key): _frozen(numbers(value, f"data.{key}")) for key, value in data.items()})
            _validate(self)

    def _settle_threshold(self) -> None:
        """τ from ``meta.feasible_when`` when the file states it there (checking the meta of
        studies as it goes), which a stated threshold must match; 0 when neither gives one."""
        derived = feasible_threshold(self.meta, self.noise)
        if derived is None:
            if self.threshold is _FROM_META:
                replace_field(self, "threshold", 0.0)
            return
        when = safe_text(repr(self.meta["feasible_when"]))
        if not self.threshold_known:
            raise FieldError("threshold_known", f"cannot be false with meta.feasible_when {when}, which fixes the "
                                                "threshold; drop one of them")
        if self.threshold is _FROM_META:
            replace_field(self, "threshold", derived)
        elif abs(self.threshold - derived) > THRESHOLD_AGREEMENT * max(abs(self.threshold), abs(derived)):
            # the likely slip: τ = v for "mean at least v", whose answers are recorded negated
            negated = isinstance(self.noise, GaussianNoise) and "least" in self.meta["feasible_when"].lower()
            hint = " (answers are recorded negated)" if negated and self.threshold == -derived else ""
            raise FieldError("threshold", f"{self.threshold!r} disagrees with meta.feasible_when {when}, which "
                                          f"gives {derived!r}{hint}; drop threshold or make them agree")

    @classmethod
    def from_arrays(cls, arms: Any, reward: Any, threshold: float, constraint: Any = None, *,
                    noise: NoiseModel | float | str = 0.05, name: str = "instance", **fields: Any) -> Instance:
        """An instance from arrays, as a file gives one: ``arms`` (K, d); ``reward`` θ (d,), or
        one known reward per arm (K,) when its length is K ≠ d; the threshold τ (required, as
        in a file; with K = d a (d,) ``reward`` is θ, ``reward=None, reward_values=…`` gives
        per-arm rewards); the hidden constraint φ (d,), or None for a real problem whose answers
        come from people; ``noise`` a noise model, σ of Gaussian noise, or ``"binary"``
        (yes/no answers, Lindner et al. 2022, Appendix C). ``fields`` are the file's other
        fields (``meta``, ``threshold_known``, ``constraint_norm_bound``, ``data``). Every field
        is checked as a file's is: a bad one is one :class:`InstanceError`."""
        if isinstance(noise, str):
            if noise != "binary":
                raise InstanceError(f"noise: 'binary', a σ of Gaussian noise or a noise model, got {noise!r}")
            noise = BinaryNoise()
        elif not isinstance(noise, (GaussianNoise, BinaryNoise)):
            noise = GaussianNoise(noise)
        try:
            shape = np.shape(arms)
            per_arm = len(shape) == 2 and np.ndim(reward) == 1 and len(reward) == shape[0] != shape[1]
        except (TypeError, ValueError):  # ragged arms: the constructor says what is wrong
            per_arm = False
        rewards = {"reward_values": reward} if per_arm else {"reward": reward}
        return cls(name=name, arms=arms, constraint=constraint, threshold=threshold, noise=noise, **rewards, **fields)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Instance):
            return NotImplemented
        return self.to_mapping() == other.to_mapping()

    __hash__ = None  # type: ignore[assignment]

    @property
    def n_arms(self) -> int:
        return self.arms.shape[0]

    @property
    def dim(self) -> int:
        return self.arms.shape[1]

    @cached_property
    def problem(self) -> Problem:
        """The learner's view (Lindner et al. 2022, §2): with an unknown threshold, append a
        constant 1 to every arm, −τ to φ, 0 to θ, and use τ = 0."""
        rewards = self.rewards
        if self.threshold_known:
            arms, threshold = self.arms, self.threshold
        else:
            arms = np.hstack([self.arms, np.ones((self.n_arms, 1))])
            threshold = 0.0
        arms.setflags(write=False)
        return Problem(arms, rewards, threshold, self.noise, self.constraint_norm_bound)

    def label(self, arm: int | None) -> str | None:
        """The arm's entry of ``meta.labels`` as text (control characters escaped), None
        without labels or for "no arm"."""
        labels = self.meta.get("labels")
        if labels is None or arm is None:
            return None
        return safe_text(labels[arm])

    @property
    def has_truth(self) -> bool:
        """Whether the file holds the hidden constraint φ (simulations and scores need it)."""
        return self.constraint is not None

    def require_truth(self) -> np.ndarray:
        """φ as written in the file, or one line naming the file and the missing field.

        Every reader of the truth (:attr:`truth`, :attr:`gaps` and what derives from them:
        bounds, simulated answers, scores) goes through here."""
        if self.constraint is None:
            where = self.source if self.source is not None else f"instance {self.name!r}"
            path = self.source if self.source is not None and not self.source.startswith("<") else "FILE"
            raise MissingTruthError(
                f"{where}: constraint: missing; bounds, simulated runs and scores need the hidden constraint φ (this "
                f"file describes a real problem): run an algorithm on real answers with "
                f"`cbai session start {path} --algo NAME`")
        return self.constraint

    def without_truth(self) -> Instance:
        """The same problem without φ: the file of a real problem (``--no-truth``)."""
        return dataclasses.replace(self, constraint=None, guessed_constraint=False)

    def with_guessed_constraint(self, constraint: Any) -> Instance:
        """The same problem with ``constraint`` (φ, length d: the file's coordinates, before
        an unknown threshold is folded in) put in as its hidden constraint, replacing the
        file's if it has one, and marked :attr:`guessed_constraint`: its bounds, simulated
        answers and scores are those of a world where the guess is the truth.

        The guess is checked as a file's ``constraint`` is (length d, finite numbers within
        ±10¹⁰⁰, ``‖φ‖ ≤ constraint_norm_bound``, binary means φᵀx in [−1, 1]): one line
        ``FIELD: RULE``, an :class:`InstanceError`."""
        return dataclasses.replace(self, constraint=constraint, guessed_constraint=True)

    @cached_property
    def truth(self) -> Truth:
        """φ and τ in the learner's coordinates (see :attr:`problem`)."""
        constraint = self.require_truth()
        if self.threshold_known:
            return Truth(constraint, self.threshold, self.noise)
        return Truth(_frozen(np.append(constraint, -self.threshold)), 0.0, self.noise)

    @cached_property
    def rewards(self) -> np.ndarray:
        """(K,) known reward of every arm: θᵀx, or the stated per-arm values."""
        if self.reward is None:
            return self.reward_values
        return _frozen(self.arms @ self.reward)

    @cached_property
    def gaps(self) -> np.ndarray:
        """(K,) g(x) = φᵀx − τ."""
        return _frozen(self.arms @ self.require_truth() - self.threshold)

    @cached_property
    def feasible(self) -> np.ndarray:
        """(K,) bool: φᵀx ≤ τ."""
        return _frozen(self.gaps <= 0)

    @cached_property
    def best_reward(self) -> float | None:
        """The best feasible reward, or None when no arm is feasible."""
        if not self.feasible.any():
            return None
        return float(self.rewards[self.feasible].max())

    @cached_property
    def best_arm(self) -> int | None:
        """Index of the first constrained-optimal arm x*, or None when no arm is feasible."""
        if self.best_reward is None:
            return None
        candidates = np.flatnonzero(self.feasible & (self.rewards == self.best_reward))
        return int(candidates[0])

    def is_correct(self, recommended: int | None) -> bool:
        """Whether an answer is right (Lindner et al. 2022, §2, the CBAI objective): a feasible arm with the best
        feasible reward (any copy or tie), or "no feasible arm" when there is none."""
        if recommended is None:
            return self.best_reward is None
        return bool(self.feasible[recommended] and self.rewards[recommended] == self.best_reward)

    def violates(self, recommended: int | None) -> bool:
        """Whether the recommended arm breaks the constraint."""
        return recommended is not None and not bool(self.feasible[recommended])

    @cached_property
    def duplicate_groups(self) -> list[list[int]]:
        """Groups (of size ≥ 2) of arms that are identical in features and reward, in the
        lexicographic order of their rows, each group's arms in increasing order.

        Only arms whose rows share a key can be copies: the key is a wrapping integer sum of
        the rows' bit patterns (0.0 for −0.0, which compares equal) times fixed odd
        multipliers, exact whatever the order of summation. Among arms that share a key, an
        arm equal to the first of its key's run is its copy, and ``np.unique`` over rows sorts
        only those first arms (and arms whose keys collide without being equal): one pass and
        a sort of K keys instead of a lexicographic sort of K rows (0.86 s at K = 10⁵, d = 100)."""
        d = self.arms.shape[1]
        multipliers = np.arange(1, d + 2, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) | np.uint64(1)
        keys = (self.arms + 0.0).view(np.uint64) @ multipliers[:d]  # integer products wrap: exact in any order
        keys += (self.rewards + 0.0).view(np.uint64) * multipliers[d]
        order = np.argsort(keys, kind="stable")
        shared = np.flatnonzero(keys[order[1:]] == keys[order[:-1]])
        candidate = np.zeros(keys.size, dtype=bool)  # arms whose key another arm shares
        candidate[order[shared]] = candidate[order[shared + 1]] = True
        if not candidate.any():
            return []
        # Each candidate's run of equal keys starts at its first arm; an arm equal to that first
        # arm in features and reward is its copy, so only representatives (and the rare arms of
        # a run that differ from its first, a collision of keys) need the lexicographic sort.
        ordered = order[candidate[order]]
        starts = np.r_[True, keys[ordered[1:]] != keys[ordered[:-1]]]
        first = ordered[np.maximum.accumulate(np.where(starts, np.arange(ordered.size), 0))]
        copies = np.all(self.arms[ordered] == self.arms[first], axis=1) & (self.rewards[ordered] == self.rewards[first])
        kept = np.zeros(keys.size, dtype=bool)
        kept[first] = kept[ordered[~copies]] = True
        distinct = np.flatnonzero(kept)  # sorted, as the labels below need
        keyed = np.hstack([self.arms[distinct], self.rewards[distinct, None]])
        _, representative = np.unique(keyed, axis=0, return_inverse=True)
        # each arm's group: its representative's rank among the distinct rows (distinct is sorted)
        label = representative.ravel()[np.searchsorted(distinct, np.where(copies, first, ordered))]
        by_group = np.lexsort((ordered, label))  # groups in the rows' order, arms increasing within
        label, members = label[by_group], ordered[by_group]
        bounds = np.flatnonzero(np.r_[True, label[1:] != label[:-1], True])
        return [members[start:stop].tolist() for start, stop in zip(bounds[:-1], bounds[1:]) if stop - start > 1]

    @cached_property
    def boundary_arms(self) -> np.ndarray:
        """Indices of arms with g(x) = 0 up to round-off (|g(x)| ≤ BOUNDARY_TOLERANCE·(|x|ᵀ|φ| +
        |τ|)): no finite number of queries decides them."""
        magnitudes = np.abs(self.arms) @ np.abs(self.require_truth()) + abs(self.threshold)
        return _frozen(np.flatnonzero(np.abs(self.gaps) <= BOUNDARY_TOLERANCE * magnitudes))

    def to_mapping(self) -> dict[str, Any]:
        """The file's fields, in order, as plain Python values."""
        mapping: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "kind": KIND,
            "name": self.name,
            "arms": self.arms.tolist(),
        }
        if self.reward is not None:
            mapping["reward"] = self.reward.tolist()
        else:
            mapping["reward_values"] = np.asarray(self.reward_values).tolist()
        if self.constraint is not None:
            mapping["constraint"] = self.constraint.tolist()
        mapping["threshold"] = float(self.threshold)
        mapping["threshold_known"] = bool(self.threshold_known)
        mapping["noise"] = self.noise.to_mapping()
        if self.constraint_norm_bound is not None:
            mapping["constraint_norm_bound"] = float(self.constraint_norm_bound)
        mapping["meta"] = plain(dict(self.meta))
        if self.data:
            mapping["data"] = {name: np.asarray(array).tolist() for name, array in self.data.items()}
        return mapping

    @cached_property
    def content_hash(self) -> str:
        """A short SHA-256 of the canonical content (name excluded), for records."""
        return content_hash_of(self.to_mapping())


def content_hash_of(mapping: dict[str, Any]) -> str:
    """A short SHA-256 of a file mapping's canonical content, without name, meta and data
    (which do not change the problem). Used by every instance kind."""
    content = {key: value for key, value in mapping.items() if key not in ("name", "meta", "data")}
    text = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def plain(value: Any) -> Any:
    """Numpy scalars and arrays inside ``meta`` as plain Python values."""
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def mapping_value(value: Any, field: str, what: str) -> Mapping[str, Any]:
    """An optional mapping field (``meta``, ``data``): absent (None) or empty means ``{}``;
    anything else that is not a mapping (a list, an NPZ array) is one line."""
    if value is None or (isinstance(value, (list, tuple, str)) and not value):
        return {}
    if not isinstance(value, Mapping):
        raise InstanceError(f"{field}: must be {what}")
    return value


def plain_meta(value: Any) -> dict[str, Any]:
    """A plain copy of an instance's ``meta`` (numpy values as Python ones, nested mappings
    and lists copied), so that the instance does not share the caller's objects; shared by
    every instance kind.

    Raises:
        InstanceError: ``meta: must be a mapping`` or ``meta: must hold only plain values …``.
    """
    meta = plain(dict(mapping_value(value, "meta", "a mapping")))
    try:
        json.dumps(meta)
    except (TypeError, ValueError):
        raise InstanceError("meta: must hold only plain values (numbers, strings, lists, mappings)") from None
    return meta


def check_schema_version(mapping: Mapping[str, Any]) -> None:
    """The file's ``schema_version`` (1 when absent) must be the one this cbai reads; shared
    by every instance kind."""
    version = mapping.get("schema_version", SCHEMA_VERSION)
    if isinstance(version, np.ndarray) and version.ndim == 0:
        version = version.item()
    number = isinstance(version, (int, float, np.integer, np.floating)) and not isinstance(version, bool)
    shown = version.tolist() if isinstance(version, np.ndarray) else version
    if not number:
        raise InstanceError(f"schema_version: must be the number {SCHEMA_VERSION}, got {shown!r} "
                            f"(a {type(shown).__name__})")
    if version != SCHEMA_VERSION:
        raise InstanceError(f"schema_version: {shown!r} is not supported (this cbai reads version {SCHEMA_VERSION})")


def _frozen(values: np.ndarray) -> np.ndarray:
    """``values`` made read-only: a cached answer that its readers must not be able to change."""
    values.setflags(write=False)
    return values


def _array(value: Any, field_name: str) -> np.ndarray:
    """``arms`` as a (K, d) array, every other array field as a vector; an empty one is
    left to :func:`_validate`, whose message says what is missing."""
    if field_name == "arms":
        return moderate(array(value, field_name, 2, what=ARMS_SHAPE, nonempty=False), field_name)
    return moderate(array(value, field_name, 1, nonempty=False), field_name)


def parse_noise(value: Any) -> NoiseModel:
    """``{kind: gaussian, sigma: s}`` or ``{kind: binary}``."""
    if not isinstance(value, Mapping) or "kind" not in value:
        raise InstanceError("noise: must be a mapping like {kind: gaussian, sigma: 0.05} or {kind: binary}")
    kind = value["kind"]
    if kind == "gaussian":
        extra = set(value) - {"kind", "sigma"}
        if extra:
            raise InstanceError(f"noise: unknown key(s) {', '.join(sorted(map(str, extra)))} for gaussian noise")
        if "sigma" not in value:
            raise InstanceError("noise.sigma: required for gaussian noise")
        return GaussianNoise(value["sigma"])
    if kind == "binary":
        extra = set(value) - {"kind"}
        if extra:
            raise InstanceError(f"noise: binary noise takes no parameters, got {', '.join(sorted(map(str, extra)))}")
        return BinaryNoise()
    raise InstanceError(f"noise.kind: must be 'gaussian' or 'binary', got {kind!r}")


def _check_labels(labels: Any, n_arms: int) -> None:
    """``meta.labels``, when given, names every arm: a list of K texts or numbers."""
    if labels is None:
        return
    if not isinstance(labels, list) or not all(isinstance(label, (str, int, float)) and not isinstance(label, bool)
                                               for label in labels):
        raise InstanceError("meta.labels: must be a list with one text per arm")
    if len(labels) != n_arms:
        raise InstanceError(f"meta.labels: has {len(labels)} labels for {n_arms} arms; give one per arm")


def _validate(instance: Instance) -> None:
    """Shapes agree, K ≥ 1, the norm bound holds, binary means lie in [−1, 1] (the fields
    themselves are checked by :meth:`Instance.__post_init__`)."""
    arms, constraint = instance.arms, instance.constraint
    if arms.ndim != 2 or arms.shape[0] < 1 or arms.shape[1] < 1:
        raise InstanceError(f"arms: need at least one arm of dimension ≥ 1, got shape {arms.shape}")
    k, d = arms.shape
    _check_labels(instance.meta.get("labels"), k)
    if constraint is not None and constraint.shape != (d,):
        raise InstanceError(f"constraint: length {constraint.shape[0] if constraint.ndim == 1 else constraint.shape} does not match the arms' dimension d = {d}")
    if (instance.reward is None) == (instance.reward_values is None):
        raise InstanceError("give exactly one of reward (θ, length d) and reward_values (length K)")
    if instance.reward is not None and instance.reward.shape != (d,):
        raise InstanceError(f"reward: length {instance.reward.shape[0]} does not match the arms' dimension d = {d}")
    if instance.reward_values is not None and np.shape(instance.reward_values) != (k,):
        raise InstanceError(f"reward_values: length {np.shape(instance.reward_values)[0]} does not match the number of arms K = {k}")
    bound = instance.constraint_norm_bound
    if bound is not None and instance.has_truth:
        # S bounds φ in the learner's coordinates: (φ, −τ) when the threshold is folded in.
        norm = float(np.linalg.norm(instance.truth.constraint))
        if bound < norm - NORM_TOL:
            what = "‖φ‖" if instance.threshold_known else "‖(φ, −τ)‖ (the threshold is folded in)"
            raise InstanceError(f"constraint_norm_bound: {bound:g} is below {what} = {norm:.6g}")
    if isinstance(instance.noise, BinaryNoise) and instance.has_truth:
        means = instance.truth.means(instance.problem.arms)
        worst = int(np.argmax(np.abs(means)))
        if abs(means[worst]) > 1 + 1e-12:
            raise InstanceError(
                f"noise: binary feedback needs every constraint value φᵀx in [−1, 1]; "
                f"arm {worst} has {means[worst]:.6g} (rescale the arms, as the paper does for the driver, Appendix C)"
            )


def from_mapping(mapping: Mapping[str, Any], source: str = "<instance>") -> Instance:
    """Build a validated :class:`Instance` from a file's mapping of fields.

    Every problem is reported as one line ``SOURCE: FIELD: RULE``.
    """
    with instance_errors(source):
        return _from_mapping(mapping, source)


def _from_mapping(mapping: Mapping[str, Any], source: str) -> Instance:
    # The kind first: a file of another kind has other fields, and saying so is the useful message.
    kind = mapping.get("kind", KIND)
    if kind != KIND:
        raise InstanceError(f"kind: expected {KIND!r} here, got {kind!r} (cbai_cli.kinds.load reads every kind)")
    unknown = [key for key in mapping if key not in _FIELDS]
    if unknown:
        raise InstanceError(f"unknown field(s) {', '.join(map(str, unknown))}; valid fields: {', '.join(_FIELDS)}")
    check_schema_version(mapping)
    meta = mapping.get("meta")
    # meta.feasible_when states τ in the raters' terms: the threshold may then be left out
    stated = isinstance(meta, Mapping) and meta.get("feasible_when") is not None
    for required in ("arms", "noise") if stated else ("arms", "threshold", "noise"):
        if required not in mapping:
            raise InstanceError(f"{required}: required field is missing")
    # The fields are checked (and the arrays copied, once) by Instance.__post_init__.
    return Instance(
        name=mapping.get("name", _default_name(source)),
        arms=mapping["arms"],
        constraint=mapping.get("constraint"),
        reward=mapping.get("reward"),
        reward_values=mapping.get("reward_values"),
        threshold=mapping.get("threshold", _FROM_META),
        threshold_known=mapping.get("threshold_known", True),
        noise=parse_noise(mapping["noise"]),
        constraint_norm_bound=mapping.get("constraint_norm_bound"),
        meta=mapping.get("meta"),
        data=mapping.get("data"),
        source=source,
    )


def _default_name(source: str) -> str:
    """A file without ``name`` is named after the file (its stem, control characters escaped)."""
    return "instance" if source in ("-", "<stdin>") else safe_text(Path(source).stem)


def load(path: str | Path) -> Instance:
    """Read and validate a CBAI instance from YAML, NPZ or ``-`` (YAML on stdin)."""
    source = "<stdin>" if str(path) == "-" else str(path)
    return from_mapping(read_mapping(path), source)


def save(instance: Instance, path: str | Path) -> None:
    """Write an instance as YAML or NPZ by extension (``-``: YAML on stdout), atomically."""
    write_mapping(instance.to_mapping(), path)
