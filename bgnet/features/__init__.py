"""Input feature sets: how a board becomes the numbers a net reads. Each set has a
version number, a width, a numba row kernel (one board at a time, inside search and
self-play loops) and a torch kernel (a batch on any device); a new set is one new
module plus one registration in ``bgnet.features.registry``. Imports only ``core``.
"""
