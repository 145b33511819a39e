"""Instance files of the safe kinds: ``safe-regret`` (Safe-LUCB, Amani et al. 2019) and ``safe-bai``
(LinGapE and Safe-LinGapE, "Price of Safety in Linear Best Arm Identification").

Both share the file format of CBAI instances (:mod:`cbai_cli.io.files`: YAML or NPZ,
``schema_version``, ``kind``, ``name``, ``meta``; unknown keys rejected) and wrap the
library's problems (:class:`~cbai_cli.kinds.safe.problems.SafeRegretProblem`,
:class:`~cbai_cli.kinds.safe.problems.SafeBaiProblem`), which hold the hidden truth as well as
what the learner knows; algorithms only ever receive ``problem.learner_view()``.

``safe-regret`` fields (Amani et al. 2019, eq. (1) and §2)::

    action_set: {kind: box, half_width: 1.0} | {kind: ball, radius: 1.0} | {kind: finite, arms: [[..], ..]}
    mu_star: [..]          # unknown loss parameter μ* (d); the dimension of box and ball
    B: [[..], ..]          # d×d constraint matrix; action x is safe iff xᵀBμ* ≤ c
    c: 0.9                 # threshold, > 0 so that the zero action is safe
    T: 100000              # horizon
    noise: {kind: gaussian, sigma: 0.01}
    S: 1.0                 # known bound S ≥ ‖μ*‖
    L: 1.4142135623730951  # known bound L ≥ max ‖x‖ over the action set
    R: 1.0                 # sub-Gaussian scale used in the confidence radius
    lambda: 1.0            # ridge λ
    delta: 0.01            # confidence δ

``safe-bai`` fields ("Price of Safety", §3.3; values of its §5 instance, S_θ and S_μ our choice)::

    arms: [[..], ..]       # K×d, spanning R^d
    theta_star: [..]       # reward parameter θ*
    mu_star: [..]          # safety parameter μ*; γ·x_k is safe iff γ x_kᵀμ* ≥ η₀
    eta0: -0.5             # η₀ < 0, so that γ = 0 is safe
    noise: {kind: gaussian, sigma: 1.0}          # reward noise σ
    safety_noise: {kind: gaussian, sigma: 0.1}   # safety-signal noise σ_safe
    epsilon: 0.00999…      # ε of the (ε, δ_r) criterion
    delta_r: 0.001         # BAI error probability δ_r
    delta_s: 0.001         # safety confidence δ'_s
    lambda: 1.0            # ridge λ
    T_FE: 800              # forced-exploration rounds
    gamma_FE: 0.2          # forced-exploration scale; must be safe for every arm
    S_theta: 2.0           # known bound S_θ ≥ ‖θ*‖
    S_mu: 1.0              # known bound S_μ ≥ ‖μ*‖

δ, λ and S of either kind (and δ'_s, S_μ of safe-bai) are the defaults of run options that
replace them for one run (:data:`REGRET_RUN_OPTIONS`, :data:`BAI_RUN_OPTIONS`).

Every problem is reported as one line ``SOURCE: FIELD: RULE``; the library's own
``ValueError`` (shapes against the dimension, S ≥ ‖μ*‖, L ≥ max ‖x‖, spanning arms)
is wrapped into :class:`~cbai_cli.contracts.errors.InstanceError` the same way.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from cbai_cli.contracts.errors import InstanceError
from cbai_cli.io.files import instance_errors
from cbai_cli.kinds.cbai.instance import SCHEMA_VERSION, check_schema_version, content_hash_of, mapping_value, plain, plain_meta
from cbai_cli.numerics.linalg import RIDGE_RATIO_LIMIT
from cbai_cli.kinds.safe.action_sets import ACTION_SET_KINDS, ActionSet
from cbai_cli.kinds.safe.paper_instances import instance_a, instance_b, price_of_safety_instance
from cbai_cli.kinds.safe.problems import SafeBaiProblem, SafeBaiSetting, SafeRegretProblem, SafeRegretSetting
from cbai_cli.kinds.safe.truths import RegretTruth, SafeBaiTruth, regret_truth, safe_bai_truth
from cbai_cli.contracts.validation import array, moderate
from cbai_cli.contracts.validation import integer
from cbai_cli.contracts.validation import nonnegative as _nonnegative
from cbai_cli.contracts.validation import positive
from cbai_cli.contracts.validation import probability as _probability
from cbai_cli.contracts.validation import real, replace_field
from cbai_cli.contracts.validation import safe_text, text

REGRET_KIND = "safe-regret"
BAI_KIND = "safe-bai"
REGRET_FIELDS = ("schema_version", "kind", "name", "action_set", "mu_star", "B", "c", "T", "noise",
                 "S", "L", "R", "lambda", "delta", "meta")
BAI_FIELDS = ("schema_version", "kind", "name", "arms", "theta_star", "mu_star", "eta0", "noise",
              "safety_noise", "epsilon", "delta_r", "delta_s", "lambda", "T_FE", "gamma_FE", "S_theta",
              "S_mu", "meta")
_OPTIONAL = ("schema_version", "kind", "name", "meta")
# The run options (cbai_cli.contracts.options) that replace a constant of the file for one run, and the
# field of the setting each replaces: the learner's confidence levels, ridge and norm bounds
# (Amani et al. 2019, §2.2; "Price of Safety", §4: δ_r and δ'_s, S_θ and S_μ).
REGRET_RUN_OPTIONS = {"delta": "delta", "ridge": "lam", "norm_bound": "S"}
BAI_RUN_OPTIONS = {"delta": "delta_r", "ridge": "lam", "norm_bound": "S_theta", "safety_delta": "delta_s",
                   "safety_norm_bound": "S_mu"}
# The library names two fields differently from the files; its messages start with them.
_LIBRARY_NAMES = {"lam": "lambda", "noise_sd": "noise.sigma"}


# --------------------------------------------------------------------------- instances


class _SafeInstance:
    """What both safe kinds share: name and dimension from the library problem, the checks
    of a file beyond the library problem's own, equality by file content, and the content
    hash of records, and the run options that replace constants of the file. Subclasses are
    frozen dataclasses with ``problem`` and ``meta`` fields and define :attr:`problem_type`,
    :attr:`run_options` (option name → the setting's field it replaces), :meth:`_check_problem`
    and :meth:`to_mapping`."""

    problem: Any
    meta: Mapping[str, Any]
    problem_type: ClassVar[type]
    run_options: ClassVar[Mapping[str, str]]

    def __post_init__(self) -> None:
        """Check what a file is checked for beyond the library problem's own rules (the name,
        ``meta``, magnitudes, the ridge, the kind's own rules), as :func:`safe_regret_from_mapping`
        and :func:`safe_bai_from_mapping` do, and keep a plain copy of ``meta`` (the library
        problem owns read-only copies of its arrays)."""
        with instance_errors():
            if not isinstance(self.problem, self.problem_type):
                raise InstanceError(f"problem: must be a {self.problem_type.__name__}, got "
                                    f"{type(self.problem).__name__}")
            text(self.problem.name, "name")
            replace_field(self, "meta", plain_meta(self.meta))
            self._check_problem()

    def _check_problem(self) -> None:
        raise NotImplementedError

    def with_setting(self, **changes: Any) -> Any:
        """The same instance with the setting's fields ``changes`` replaced, checked as a
        file's would be (:class:`InstanceError` ``FIELD: RULE``, with the file's field names)."""
        with instance_errors():
            try:
                problem = self.problem.with_setting(**changes)
            except ValueError as error:
                raise _library_error(error) from None
            return type(self)(problem, self.meta)

    def with_run_options(self, given: Mapping[str, Any]) -> Any:
        """The instance a run with the options ``given`` (by name, checked against their
        ranges) runs on: each option of :attr:`run_options` that is given replaces its
        constant of the setting; the file's value stays where none is. A value the file would
        refuse (S below ‖μ*‖, a ridge too small for double precision) is one
        :class:`~cbai_cli.contracts.errors.OptionError` naming the flag."""
        from cbai_cli.contracts.errors import OptionError
        from cbai_cli.contracts.options import OPTIONS

        instance = self
        for option, setting_field in self.run_options.items():
            if given.get(option) is None:
                continue
            try:
                instance = instance.with_setting(**{setting_field: given[option]})
            except InstanceError as error:
                rule = str(error).partition(": ")[2]
                raise OptionError(f"{OPTIONS[option].flag}: {rule}", option) from None
        return instance

    @property
    def name(self) -> str:
        return self.problem.name

    @property
    def dim(self) -> int:
        return self.problem.d

    def to_mapping(self) -> dict[str, Any]:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.to_mapping() == other.to_mapping()

    __hash__ = None  # type: ignore[assignment]

    @cached_property
    def content_hash(self) -> str:
        """A short SHA-256 of the canonical content (name and meta excluded), for records."""
        return content_hash_of(self.to_mapping())


@dataclass(frozen=True, eq=False)
class SafeRegretInstance(_SafeInstance):
    """One ``kind: safe-regret`` file (Amani et al. 2019, §2): a Safe-LUCB problem and its meta.

    Attributes:
        problem: the validated library problem (setting and truth μ*).
        meta: free mapping (generator, parameters).
    """

    problem: SafeRegretProblem
    meta: Mapping[str, Any] = field(default_factory=dict)
    kind: ClassVar[str] = REGRET_KIND
    problem_type: ClassVar[type] = SafeRegretProblem
    run_options: ClassVar[Mapping[str, str]] = REGRET_RUN_OPTIONS

    def _check_problem(self) -> None:
        """Magnitudes within ±1e100 and a ridge that keeps A⁻¹ in double precision."""
        s = self.problem.setting
        parameter = s.action_set.parameter
        _check_magnitudes({"mu_star": self.problem.mu_star, "B": s.B, "c": s.c, "S": s.S, "L": s.L, "lambda": s.lam,
                           f"action_set.{parameter}": getattr(s.action_set, parameter)})
        _check_ridge(s.lam, s.action_set.max_norm, f"an action of the {s.action_set.label()}")

    @property
    def summary(self) -> str:
        """A few words for messages: the action set and the dimension."""
        return f"{action_set_label(self.problem.setting.action_set)}, T = {self.problem.setting.T:,}"

    @cached_property
    def truth(self) -> RegretTruth:
        """x*, its loss and the safety gap Δ (Amani et al. 2019, §2 and §3.3), read-only."""
        return _frozen_arrays(regret_truth(self.problem))

    def with_horizon(self, horizon: int) -> SafeRegretInstance:
        """The same instance with another horizon T (validated like a file's T)."""
        with instance_errors():
            _integer(horizon, "T", 1)
        return self.with_setting(T=int(horizon))

    def to_mapping(self) -> dict[str, Any]:
        """The file's fields, in order, as plain Python values."""
        p, s = self.problem, self.problem.setting
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": REGRET_KIND,
            "name": p.name,
            "action_set": action_set_mapping(s.action_set),
            "mu_star": p.mu_star.tolist(),
            "B": s.B.tolist(),
            "c": float(s.c),
            "T": int(s.T),
            "noise": {"kind": "gaussian", "sigma": float(p.noise_sd)},
            "S": float(s.S),
            "L": float(s.L),
            "R": float(s.R),
            "lambda": float(s.lam),
            "delta": float(s.delta),
            "meta": plain(dict(self.meta)),
        }


@dataclass(frozen=True, eq=False)
class SafeBaiInstance(_SafeInstance):
    """One ``kind: safe-bai`` file ("Price of Safety", §3.3): a safe BAI problem and its meta."""

    problem: SafeBaiProblem
    meta: Mapping[str, Any] = field(default_factory=dict)
    kind: ClassVar[str] = BAI_KIND
    problem_type: ClassVar[type] = SafeBaiProblem
    run_options: ClassVar[Mapping[str, str]] = BAI_RUN_OPTIONS

    def _check_problem(self) -> None:
        """Magnitudes within ±1e100, a ridge that keeps A⁻¹ in double precision, and a
        forced exploration that is safe for every arm."""
        p, s = self.problem, self.problem.setting
        _check_magnitudes({"arms": s.arms, "theta_star": p.theta_star, "mu_star": p.mu_star, "eta0": s.eta0,
                           "gamma_FE": s.gamma_FE, "lambda": s.lam, "S_theta": s.S_theta, "S_mu": s.S_mu})
        _check_ridge(s.lam, float(np.linalg.norm(s.arms, axis=1).max()), "an arm")
        # Forced exploration plays γ_FE·x_k for every arm on the learner's word that it is safe
        # ("Price of Safety", §4: forced exploration samples "from a known safe set"); a file that
        # breaks this promise would make Safe-LinGapE unsafe by design.
        values = s.gamma_FE * (s.arms @ p.mu_star)
        if s.T_FE > 0 and np.any(values < s.eta0):
            arm = int(np.argmin(values))
            raise InstanceError(f"gamma_FE: forced exploration at γ_FE = {s.gamma_FE:g} is unsafe for arm {arm} "
                                f"(γ_FE·x_kᵀμ* = {values[arm]:.6g} < η₀ = {s.eta0:g}); it must be safe for every arm")

    @property
    def n_arms(self) -> int:
        return self.problem.K

    @property
    def summary(self) -> str:
        return f"{self.n_arms} arms, d = {self.dim}"

    @cached_property
    def truth(self) -> SafeBaiTruth:
        """Safety values x_kᵀμ*, true safe scales γ_k, safe rewards and k* ("Price of Safety", §3.3), read-only."""
        return _frozen_arrays(safe_bai_truth(self.problem))

    def to_mapping(self) -> dict[str, Any]:
        p, s = self.problem, self.problem.setting
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": BAI_KIND,
            "name": p.name,
            "arms": s.arms.tolist(),
            "theta_star": p.theta_star.tolist(),
            "mu_star": p.mu_star.tolist(),
            "eta0": float(s.eta0),
            "noise": {"kind": "gaussian", "sigma": float(s.sigma)},
            "safety_noise": {"kind": "gaussian", "sigma": float(s.sigma_safe)},
            "epsilon": float(s.epsilon),
            "delta_r": float(s.delta_r),
            "delta_s": float(s.delta_s),
            "lambda": float(s.lam),
            "T_FE": int(s.T_FE),
            "gamma_FE": float(s.gamma_FE),
            "S_theta": float(s.S_theta),
            "S_mu": float(s.S_mu),
            "meta": plain(dict(self.meta)),
        }


def _frozen_arrays(truth: Any) -> Any:
    """``truth`` (a frozen dataclass) with its arrays made read-only: it is cached by the
    instance, and a reader that changed it would change every later score."""
    for item in dataclasses.fields(truth):
        value = getattr(truth, item.name)
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
    return truth


def _check_magnitudes(values: Mapping[str, Any]) -> None:
    """Every number of every field (file name → number or array) within ±1e100 (see
    :func:`cbai_cli.contracts.validation.moderate`), for a problem built without a file. A file's
    parsers check each field as they read it, before the library problem's norm checks,
    whose ‖·‖ would overflow to ∞ on such numbers and name the wrong field."""
    for field_name, value in values.items():
        moderate(value, field_name)


def action_set_label(action_set: ActionSet) -> str:
    """``box [−w, w]^d``, ``ball of radius r in R^d`` or ``K arms in R^d``, for tables."""
    return action_set.label()


def action_set_mapping(action_set: ActionSet) -> dict[str, Any]:
    """The file form of an action set: ``{kind: box|ball|finite, half_width|radius|arms}``."""
    return action_set.to_mapping()


# --------------------------------------------------------------------------- field parsers


def _array(value: Any, field_name: str, ndim: int) -> np.ndarray:
    """An array field whose entries stay within ±1e100 (see :func:`cbai_cli.contracts.validation.moderate`)."""
    return moderate(array(value, field_name, ndim), field_name)


def _real(value: Any, field_name: str) -> float:
    """A number field within ±1e100."""
    return moderate(real(value, field_name), field_name)


def _positive(value: Any, field_name: str) -> float:
    """A positive number field within 1e100."""
    return moderate(positive(value, field_name), field_name)


def _integer(value: Any, field_name: str, low: int) -> int:
    """An integer ≥ ``low``; a float with an integral value (``100000.0``) is still a valid count, 2.5 is not."""
    return integer(value, field_name, low, integral_float=True)


def _gaussian_sigma(value: Any, field_name: str) -> float:
    """``{kind: gaussian, sigma: s}`` with s ≥ 0 (the safe environments draw Gaussian noise only)."""
    example = f"{field_name}: must be a mapping like {{kind: gaussian, sigma: 0.1}}"
    if not isinstance(value, Mapping) or "kind" not in value:
        raise InstanceError(example)
    if value["kind"] != "gaussian":
        raise InstanceError(f"{field_name}.kind: the safe kinds support only 'gaussian' noise, got {value['kind']!r}")
    extra = sorted(map(str, set(value) - {"kind", "sigma"}))
    if extra:
        raise InstanceError(f"{field_name}: unknown key(s) {', '.join(extra)} (valid: kind, sigma)")
    if "sigma" not in value:
        raise InstanceError(f"{field_name}.sigma: required for gaussian noise")
    return _nonnegative(value["sigma"], f"{field_name}.sigma")


def _alternatives(words: list[str]) -> str:
    """``a, b or c``."""
    return ", ".join(words[:-1]) + f" or {words[-1]}"


def _action_set(value: Any, d: int) -> ActionSet:
    """``{kind: <kind>, <parameter>: …}`` for one of the kinds of :data:`ACTION_SET_KINDS`
    (Amani et al. 2019, §2: the action set D_0)."""
    if not isinstance(value, Mapping) or "kind" not in value:
        examples = _alternatives([kind.example for kind in ACTION_SET_KINDS.values()])
        raise InstanceError(f"action_set: must be a mapping like {examples}")
    kind = value["kind"]
    if kind not in ACTION_SET_KINDS:
        raise InstanceError(f"action_set.kind: must be {_alternatives([repr(name) for name in ACTION_SET_KINDS])}, "
                            f"got {kind!r}")
    key = ACTION_SET_KINDS[kind].parameter
    extra = sorted(map(str, set(value) - {"kind", key}))
    if extra:
        raise InstanceError(f"action_set: unknown key(s) {', '.join(extra)} for a {kind} (valid: kind, {key})")
    if key not in value:
        raise InstanceError(f"action_set.{key}: required for a {kind}")
    field_name = f"action_set.{key}"
    if ACTION_SET_KINDS[kind].parameter_is_array:
        parameter = _array(value[key], field_name, 2)
    else:
        parameter = _positive(value[key], field_name)
    action_set = ActionSet.from_mapping({"kind": kind, key: parameter}, d)
    if action_set.d != d:
        raise InstanceError(f"{field_name}: rows have length {action_set.d}, but mu_star has length d = {d}")
    return action_set


def _common(mapping: Mapping[str, Any], source: str, fields: tuple[str, ...], kind: str) -> tuple[str, dict]:
    """Checks shared by both kinds: known keys, version, kind, required fields, name, meta."""
    unknown = [str(key) for key in mapping if key not in fields]
    if unknown:
        raise InstanceError(f"unknown field(s) {', '.join(unknown)}; valid fields for {kind}: {', '.join(fields)}")
    check_schema_version(mapping)
    if mapping.get("kind") != kind:
        raise InstanceError(f"kind: expected {kind!r} here, got {mapping.get('kind')!r}")
    for required in fields:
        if required not in _OPTIONAL and required not in mapping:
            raise InstanceError(f"{required}: required field is missing")
    name = text(mapping.get("name", safe_text(Path(source).stem) if source not in ("-", "<stdin>", "<instance>") else kind),
                "name")
    return name, mapping_value(mapping.get("meta"), "meta", "a mapping")


def _library_error(error: ValueError) -> InstanceError:
    """The library's ``ValueError`` as a one-line :class:`InstanceError` with the file's field names."""
    message = str(error).splitlines()[0]
    # "S=0.5 is below ‖mu_star‖ = …" → "S: 0.5 is below ‖mu_star‖ = …" (FIELD: RULE, like every message).
    message = re.sub(r"^(\w+)=(\S+) ", r"\1: \2 ", message)
    head, _, rest = message.partition(" ")
    for library, file_name in _LIBRARY_NAMES.items():
        if head.rstrip(":=") == library:
            message = file_name + head[len(library):] + " " + rest
    return InstanceError(message)


def _check_ridge(lam: float, largest: float, what: str) -> None:
    """``lambda`` against L², L = ``largest`` the largest norm of a vector the algorithms'
    design A = λI + Σxxᵀ takes in (``what`` says of which set): at most
    :data:`~cbai_cli.numerics.linalg.RIDGE_RATIO_LIMIT` apart, or A⁻¹ loses its digits (wrong answers,
    then a failing run)."""
    squared = largest**2
    if squared > RIDGE_RATIO_LIMIT * lam:
        least = squared / RIDGE_RATIO_LIMIT
        step = 10.0 ** (math.floor(math.log10(least)) - 2)
        least = math.ceil(least / step) * step  # three digits, rounded up so that it is accepted
        raise InstanceError(f"lambda: {lam:g} is {squared / lam:.3g} times smaller than L² = {squared:.3g} (L = "
                            f"{largest:.4g}, the largest norm of {what}), more than {RIDGE_RATIO_LIMIT:.0e}: A⁻¹ = "
                            f"(λI + Σxxᵀ)⁻¹ cannot be kept in double precision; set lambda to at least "
                            f"{least:.3g} (L²/{RIDGE_RATIO_LIMIT:.0e}; the papers use 1) or "
                            "rescale the actions")


# --------------------------------------------------------------------------- parsers


def safe_regret_from_mapping(mapping: Mapping[str, Any], source: str = "<instance>") -> SafeRegretInstance:
    """A validated :class:`SafeRegretInstance` from a file's mapping (errors: ``SOURCE: FIELD: RULE``)."""
    with instance_errors(source):
        return _safe_regret(mapping, source)


def _safe_regret(mapping: Mapping[str, Any], source: str) -> SafeRegretInstance:
    name, meta = _common(mapping, source, REGRET_FIELDS, REGRET_KIND)
    mu_star = _array(mapping["mu_star"], "mu_star", 1)
    action_set = _action_set(mapping["action_set"], mu_star.shape[0])
    B = _array(mapping["B"], "B", 2)
    d = mu_star.shape[0]
    if B.shape != (d, d):
        raise InstanceError(f"B: must be {d}×{d} (d = {d} from mu_star), got shape {B.shape}")
    c = _real(mapping["c"], "c")
    if c <= 0:
        raise InstanceError(f"c: must be > 0 so that the zero action is safe (Amani et al. 2019, eq. (1)), got {c:g}")
    horizon = _integer(mapping["T"], "T", 1)
    noise_sd = _gaussian_sigma(mapping["noise"], "noise")
    fields = dict(
        T=horizon, S=_positive(mapping["S"], "S"), L=_positive(mapping["L"], "L"), R=_nonnegative(mapping["R"], "R"),
        lam=_positive(mapping["lambda"], "lambda"), delta=_probability(mapping["delta"], "delta"),
    )
    try:
        problem = SafeRegretProblem(SafeRegretSetting(action_set=action_set, B=B, c=c, **fields), mu_star=mu_star,
                                    noise_sd=noise_sd, name=name)
    except ValueError as error:
        raise _library_error(error) from None
    return SafeRegretInstance(problem, meta)


def safe_bai_from_mapping(mapping: Mapping[str, Any], source: str = "<instance>") -> SafeBaiInstance:
    """A validated :class:`SafeBaiInstance` from a file's mapping (errors: ``SOURCE: FIELD: RULE``)."""
    with instance_errors(source):
        return _safe_bai(mapping, source)


def _safe_bai(mapping: Mapping[str, Any], source: str) -> SafeBaiInstance:
    name, meta = _common(mapping, source, BAI_FIELDS, BAI_KIND)
    arms = _array(mapping["arms"], "arms", 2)
    k, d = arms.shape
    vectors = {}
    for key in ("theta_star", "mu_star"):
        vectors[key] = _array(mapping[key], key, 1)
        if vectors[key].shape != (d,):
            raise InstanceError(f"{key}: length {vectors[key].shape[0]} does not match the arms' dimension d = {d}")
    eta0 = _real(mapping["eta0"], "eta0")
    if eta0 >= 0:
        raise InstanceError(f"eta0: must be < 0 so that γ = 0 is safe (\"Price of Safety\", §3.3), got {eta0:g}")
    gamma_fe = _real(mapping["gamma_FE"], "gamma_FE")
    if not 0 < gamma_fe <= 1:
        raise InstanceError(f"gamma_FE: must lie in (0, 1], got {gamma_fe:g}")
    fields = dict(
        sigma=_gaussian_sigma(mapping["noise"], "noise"),
        sigma_safe=_gaussian_sigma(mapping["safety_noise"], "safety_noise"),
        epsilon=_nonnegative(mapping["epsilon"], "epsilon"), delta_r=_probability(mapping["delta_r"], "delta_r"),
        delta_s=_probability(mapping["delta_s"], "delta_s"), lam=_positive(mapping["lambda"], "lambda"),
        T_FE=_integer(mapping["T_FE"], "T_FE", 0),
        S_theta=_positive(mapping["S_theta"], "S_theta"), S_mu=_positive(mapping["S_mu"], "S_mu"),
    )
    try:
        problem = SafeBaiProblem(SafeBaiSetting(arms=arms, eta0=eta0, gamma_FE=gamma_fe, **fields),
                                 theta_star=vectors["theta_star"], mu_star=vectors["mu_star"], name=name)
    except ValueError as error:
        raise _library_error(error) from None
    return SafeBaiInstance(problem, meta)


# --------------------------------------------------------------------------- paper instances (generate)


def amani_a(T: int, name: str = "amani-a", meta: Mapping[str, Any] | None = None) -> SafeRegretInstance:
    """Instance A of Amani et al. 2019, Appendix F (the authors' ``CLBwithD_0.m``): box [−1, 1]², Δ > 0."""
    return SafeRegretInstance(dataclasses.replace(instance_a(T), name=name), dict(meta or {}))


def amani_b(T: int, name: str = "amani-b", meta: Mapping[str, Any] | None = None) -> SafeRegretInstance:
    """Instance B of Amani et al. 2019, Appendix F (the authors' ``intersectCLB.m``): box [−1, 1]², Δ = 0."""
    return SafeRegretInstance(dataclasses.replace(instance_b(T), name=name), dict(meta or {}))


def soare_forced_exploration_scale(eta0: float) -> float:
    """γ_FE of :func:`soare_safe` for the threshold η₀ < 0: min(0.2, 0.4|η₀|), rounded to 12
    decimals so that the file shows 0.04, not the 0.04000000000000001 of 0.4 × 0.1; 0 (no
    valid scale) for |η₀| ≤ 1.25e-12."""
    return min(0.2, round(0.4 * abs(eta0), 12))


def soare_safe(d: int, omega: float, eta0: float, name: str = "soare-safe",
               meta: Mapping[str, Any] | None = None) -> SafeBaiInstance:
    """The instance of "Price of Safety", §5: Soare et al.'s hard instance with a safety parameter.

    γ_FE is the paper's 0.2 while that is safe for e_2 (x_2ᵀμ* = −1), i.e. for η₀ ≤ −0.2;
    closer to 0 it is 0.4|η₀|, the choice of benchmarks/repro_pos_figure1.py (docs/safe.md).
    """
    gamma_fe = soare_forced_exploration_scale(eta0)
    problem = price_of_safety_instance(d=d, omega=omega, eta0=eta0, gamma_FE=gamma_fe)
    return SafeBaiInstance(dataclasses.replace(problem, name=name), dict(meta or {}))
