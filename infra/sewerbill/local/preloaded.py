"""The last module the forkserver imports: what it preloaded, out of the collector's sight.

The forkserver imports the libraries and the code's pure modules (`invoker.PRELOAD`,
`invoker.code_preload`), hundreds of thousands of objects that every worker inherits and
keeps for its life. Left in the collector's oldest generation, each full collection in each
worker walks them all (and writes to their pages, which fork had shared). Importing this
module collects once and freezes what exists (``gc.freeze``, as Python's documentation
advises before forking), so a worker's collections walk only what the worker made itself:
its handler's modules, its composition root, its invocations' objects. Nothing a function
sees changes: the frozen objects live as long as the process in either case.
"""

from __future__ import annotations

import gc

gc.collect()
gc.freeze()
