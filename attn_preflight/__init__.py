"""attn-preflight's face: the click CLI, rendering, file reading, fleet/report and the `check --smoke` glue.

It reads inputs, asks probe/ for facts and rules/ for a judgement, and renders the result.
"""

from attn_preflight.probe import __version__

__all__ = ["__version__"]
