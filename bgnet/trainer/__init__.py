"""Training: TD(lambda) targets, the learner that fits nets to targets, run configs
with inheritance, the self-play training loop (CPU or CUDA, local or Ray workers),
checkpoint export, the luck-ranker fit and the rounds pipeline (search labels, fits
and duels). ``bgnet train`` and ``python -m train`` run it.
"""
