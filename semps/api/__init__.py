"""semps.api: the HTTP service over the broker (FastAPI).

:func:`semps.api.app.create_app` builds the application: routers per area in
:mod:`semps.api.routes`, request and response models in :mod:`semps.api.models`, the one
error shape in :mod:`semps.api.errors`, bearer tokens in :mod:`semps.api.auth`, ``/metrics``
text in :mod:`semps.api.metrics`, SSE and WebSocket streams in :mod:`semps.api.streams`, the
``POST /events`` handler in :mod:`semps.api.routes.events`, offline ``/docs`` in
:mod:`semps.api.docs`.
"""
