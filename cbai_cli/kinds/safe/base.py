"""What the two safe kinds (``safe-regret``, ``safe-bai``) share: how a run is named in a store."""

from __future__ import annotations

from typing import Any

from cbai_cli.kinds.base import InstanceKind

# The options of the request type of cbai 0.1 for safe runs (``SafeRunSpec``): a store's
# run keys hash them, so stores written then still resume.
SAFE_IDENTITY_OPTIONS = ("exploration", "rule", "updates", "horizon", "budget", "dw", "confidence_set", "intersect")


class SafeKind(InstanceKind):
    """An instance kind of the safe bandits; subclasses declare the rest."""

    identity_options = SAFE_IDENTITY_OPTIONS

    def run_identity(self, request: Any) -> dict[str, Any]:
        """The options of :data:`SAFE_IDENTITY_OPTIONS` (None when not given), and every other
        option only when given (``--delta``, ``--lambda``, … replacing a constant of the file):
        a run without them keeps the key it had before they were options."""
        identity = super().run_identity(request)
        return {**identity, **{name: value for name, value in request.given().items() if name not in identity}}
