"""akg verifier harness: probe, verify and profile PyTorch references against kernels.

The package is driven by ``worker.py``; see ``README.md`` for the line protocol.
"""

PROTOCOL_VERSION = 1
