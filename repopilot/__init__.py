"""RepoPilot: diagnose failing CI runs and propose fixes a human approves."""

__version__ = "0.1.0"
__all__ = ["__version__"]
