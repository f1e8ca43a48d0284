"""``bgnet serve``: a local web app (the board page) and a JSON API over the requests of ``bgnet.app``.

The engine side (``bgnet.serve.engine``) is plain Python and needs no web
packages; ``bgnet.serve.app`` builds the FastAPI app on top of it and is the only
module that imports fastapi (the optional ``web`` extra).
"""
