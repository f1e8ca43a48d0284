"""Suite-wide settings: caches (the bear-off database) go to a temporary folder, never the user's home."""

from __future__ import annotations

import os
import tempfile

# Set at import, before any test or subprocess runs, so that CLI subprocesses inherit it too.
os.environ.setdefault("BGNET_CACHE_DIR", tempfile.mkdtemp(prefix="bgnet-test-cache-"))
