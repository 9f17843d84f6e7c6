"""Code detection and the code-family registry (pure, no I/O beyond reading the registry file)."""
from carenav_core.codes.detect import Detection, detect
from carenav_core.codes.families import Family, load_families

__all__ = ["Detection", "Family", "detect", "load_families"]
