"""Playing a game: n-ply search that ranks plays by equity at the match score, cube
decisions backed by search, agents behind one protocol with a registry of kinds
("default", "pubeval", "gnubg", a checkpoint path, a net set), ranked hints and one
``play_game`` loop with an observer for everything that plays whole games.
"""
