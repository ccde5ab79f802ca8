"""``referee serve``'s HTTP server: the app and its guards (token, sizes, caps, timeouts).

:mod:`.limits` holds what an operator bounds (:class:`~.limits.ServeLimits`), :mod:`.guards`
the ASGI layers that apply them before a request reaches an endpoint (bearer token, body
size), :mod:`.protocol` the connection timeouts uvicorn lacks (a request must arrive whole in
time), :mod:`.judging` one ``/get_reward`` request's verdict policy, :mod:`.app` the endpoints.
"""
