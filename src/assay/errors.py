"""The one base of every error assay raises on purpose.

`except assay.AssayError` catches what assay says went wrong (a usage error, a sandbox
that refused, a tool that could not be identified...) and nothing else: a bug in the
caller's own code is not mistaken for one of assay's. Each error keeps the module and
name it always had; this base only adds the common ancestor.
"""

from __future__ import annotations


class AssayError(Exception):
    """Base of every exception assay raises."""
