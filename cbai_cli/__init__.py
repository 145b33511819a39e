"""cbai: constrained linear best-arm identification and safe linear bandits."""

__version__ = "0.2.0"
