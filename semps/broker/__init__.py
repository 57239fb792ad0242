"""semps.broker: accept, log, match and deliver events.

:class:`~semps.broker.broker.Broker` ties the parts together: the SQLite
:class:`~semps.broker.store.Store` (subscriptions, tokens, the event and notification log,
webhooks, dead letters), the matching :class:`~semps.broker.pipeline.Pipeline` of worker
processes, the in-memory :class:`~semps.broker.fanout.Fanout` to live streams and the
:class:`~semps.broker.webhooks.WebhookDispatcher`. HTTP concerns (bearer headers, metrics
text) belong to :mod:`semps.api`.
"""
