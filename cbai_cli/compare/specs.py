"""Algorithm specs of ``cbai compare``: ``NAME[:REGIME][:OPTION=VALUE,...]``.

``acol``, ``g-acol:tuned:beta=0.25``, ``g-acol:theory``, ``maxrew-u:tuned:beta=0.25,budget=10000``,
``safe-lucb:exploration=0``, ``safe-lingape:updates=dynamic,rule=ratio``. The options are
those of ``cbai solve`` without dashes (:attr:`cbai_cli.contracts.options.Option.spec_name`);
algorithms without a confidence regime (the safe ones) take no regime field.

Options given once for all algorithms (``--beta 0.25`` on the command line, ``options:``
in a study file) apply where the run reads them (β to the tuned regime, λ to adaptive
algorithms, ε to round-based ones, S to theory and det, ``budget`` to every algorithm
that has one), so ``--beta 0.25`` can sit beside ``acol`` (one that no algorithm of the
comparison reads is refused, as ``cbai solve`` refuses it); an option written in a spec
always applies (the more specific value wins; a different value given for all algorithms
is named in one line, :meth:`AlgorithmChoice.override_notice`, never dropped silently), and
one the algorithm cannot use is reported by :func:`cbai_cli.run.simulate.prepare` with
``cbai solve``'s message.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cbai_cli.contracts.errors import OptionError
from cbai_cli.run.simulate import RunRequest


@dataclass(frozen=True)
class AlgorithmChoice:
    """One algorithm spec, parsed: its label (the spec as written), the request it means
    and the instance kinds its algorithm runs on."""

    label: str
    request: RunRequest
    kinds: tuple[str, ...]
    #: (library name, the spec's value, the value given for all algorithms) of every option
    #: the spec sets to another value than the shared one: the spec's applies.
    overrides: tuple[tuple[str, Any, Any], ...] = ()

    def override_notice(self, shared_source) -> str | None:
        """One line naming the shared values this spec overrides, None when it overrides
        none; ``shared_source(option, value)`` says where a shared value was given
        (``--beta 0.25``)."""
        if not self.overrides:
            return None
        own = " and ".join(f"{_spec_name(option)}={value_text(value)}" for option, value, _ in self.overrides)
        shared = " and ".join(shared_source(option, value) for option, _, value in self.overrides)
        return (f"algorithm spec {self.label!r} runs with its own {own}, not {shared} (a value written in a spec "
                "wins over one given for all algorithms)")


def split_algorithm_specs(texts: Iterable[str]) -> list[str]:
    """Split ``--algos`` values at commas into specs.

    A piece without ``:`` that holds ``=`` continues the options of the previous spec,
    so ``g-acol:tuned:beta=0.25,budget=100,acol`` is two specs.
    """
    specs: list[str] = []
    for text in texts:
        for piece in text.split(","):
            piece = piece.strip()
            if not piece:
                raise OptionError(f"--algos {text!r}: empty algorithm spec")
            if "=" in piece and ":" not in piece:
                if not specs or "=" not in specs[-1]:
                    raise OptionError(f"--algos {text!r}: option {piece!r} does not follow an algorithm spec with options "
                                      "(write NAME:REGIME:OPTION=VALUE,...)")
                specs[-1] += "," + piece
            else:
                specs.append(piece)
    return specs


def parse_pairs(text: str, items: str, where: str) -> dict[str, str]:
    """``NAME=VALUE,...`` as a mapping of texts; a name given twice is one line."""
    options: dict[str, str] = {}
    for item in items.split(","):
        name, equals, value = (part.strip() for part in item.partition("="))
        if not equals or not name or not value:
            raise OptionError(f"{where} {text!r}: expected OPTION=VALUE, got {item.strip()!r}")
        if name in options:  # which one was meant is anybody's guess: not the last silently
            raise OptionError(f"{where} {text!r}: option {name!r} is given twice")
        options[name] = value
    return options


def coerce_option(spec_name: str, value: Any, where: str, accepted: Iterable[str] | None = None) -> tuple[str, Any]:
    """An option of a spec or study file by its spec name: (library name, typed value).

    ``accepted``: the library names allowed here (None: every option of the table).
    """
    from cbai_cli.contracts.options import OPTIONS, by_spec_name

    option = by_spec_name(spec_name)
    allowed = list(OPTIONS) if accepted is None else list(accepted)
    if option is None or option.name not in allowed:
        valid = ", ".join(OPTIONS[name].spec_name for name in allowed)
        raise OptionError(f"{where}: unknown option {spec_name!r} (valid: {valid})", spec_name)
    return option.name, option.coerce(value, where)


def parse_algorithm(text: str, shared: Mapping[str, Any]) -> AlgorithmChoice:
    """``NAME[:REGIME][:OPTION=VALUE,...]`` merged with the shared options (library names)."""
    from cbai_cli.algorithms.registry import resolve, run_option_names

    parts = [part.strip() for part in text.split(":")]
    name, rest = parts[0], parts[1:]
    where = f"algorithm spec {text!r}"
    if not name:
        raise OptionError(f"{where}: missing the algorithm name")
    entry, alias = resolve(name)
    own = ", ".join(_spec_name(option) for option in entry.options)
    if not entry.regimes:
        if len(rest) > 1 or (rest and "=" not in rest[0]):
            raise OptionError(f"{where}: {name} has no confidence regime; write {name}[:OPTION=VALUE,...] "
                              f"(its options: {own})")
    elif len(rest) > 2:
        raise OptionError(f"{where}: expected NAME[:REGIME][:OPTION=VALUE,...]")
    regime: str | None = None
    written: dict[str, Any] = {}
    for position, part in enumerate(rest):
        if not part:
            raise OptionError(f"{where}: empty field between ':'")
        if "=" in part:
            if position != len(rest) - 1:
                raise OptionError(f"{where}: options come last (NAME[:REGIME][:OPTION=VALUE,...])")
            for key, value in parse_pairs(text, part, "algorithm spec").items():
                if not entry.regimes and key not in {_spec_name(option) for option in entry.options}:
                    raise OptionError(f"{where}: {name} has no option {key!r} (its options: {own})", key)
                option, typed = coerce_option(key, value, where, run_option_names())
                written[option] = typed
        elif position == 0:
            regime = part
        else:
            raise OptionError(f"{where}: expected NAME[:REGIME][:OPTION=VALUE,...]")
    if regime is not None:
        entry.check_regime(regime)
    effective = regime or (alias.regime if alias is not None and alias.regime else None) or entry.default_regime
    applying = {option: value for option, value in shared.items()
                if value is not None and option in entry.accepts(effective)}
    request = RunRequest.of(name, regime, **{**applying, **written})
    overrides = tuple((option, value, shared[option]) for option, value in written.items()
                      if shared.get(option) is not None and shared[option] != value)
    return AlgorithmChoice(label=":".join(parts), request=request, kinds=entry.kinds, overrides=overrides)


def value_text(value: Any) -> str:
    """An option's value as a person would write it (0.25, 1e-05, 1000)."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def _spec_name(option: str) -> str:
    from cbai_cli.contracts.options import OPTIONS

    return OPTIONS[option].spec_name


def parse_algorithms(texts: Iterable[str], shared: Mapping[str, Any]) -> tuple[AlgorithmChoice, ...]:
    """Every spec of ``--algos`` (or a study's ``algorithms:``), each once. The options given
    for all algorithms are checked against their ranges here, and one that no algorithm of
    the comparison reads is refused, as ``cbai solve`` refuses an option its algorithm does
    not read (it would be ignored silently)."""
    from cbai_cli.algorithms.registry import load_plugins
    from cbai_cli.contracts.options import checked

    load_plugins()  # a plugin's options are declared as its algorithm loads
    checked(shared)
    choices: list[AlgorithmChoice] = []
    for text in split_algorithm_specs(texts):
        choice = parse_algorithm(text, shared)
        if any(existing.label == choice.label for existing in choices):
            raise OptionError(f"algorithm spec {choice.label!r} is given twice")
        choices.append(choice)
    if not choices:
        raise OptionError("no algorithms: give --algos SPEC[,SPEC...] (see `cbai algorithms`)")
    _refuse_unread(shared, choices)
    return tuple(choices)


def _refuse_unread(shared: Mapping[str, Any], choices: Iterable[AlgorithmChoice]) -> None:
    """One line for an option given for all algorithms that none of ``choices`` reads."""
    from cbai_cli.algorithms.registry import option_users

    choices = list(choices)
    for option, value in shared.items():
        if value is not None and not any(option in choice.request.given() for choice in choices):
            labels = ", ".join(choice.label for choice in choices)
            readers = option_users(option)
            raise OptionError(f"option {_spec_name(option)}={value_text(value)}, given for all algorithms, is read by "
                              f"none of those compared ({labels})" + (f"; it applies to {readers}" if readers else ""),
                              option)
