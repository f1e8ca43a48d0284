"""Simulation in bulk: batched self-play, duels with paired dice and their statistics,
rollouts (settings, dice, trials, cube lines and results in separate modules), the
match runner and recorded games, and the backends (local processes or Ray) that
spread all of it over workers with the same results for the same seed.
"""
