"""semps.broker: accept, log, match and deliver events.

:class:`~semps.broker.broker.Broker` is the facade: subscriptions, tokens, and the entry of
published events. Events go one way: the :class:`~semps.broker.pipeline.Pipeline` matches
them in batches on worker processes (:mod:`semps.broker.worker`, on :mod:`semps.pool`),
:mod:`semps.broker.commit` commits each group to the store
(:class:`~semps.broker.contracts.Store`, one contract per concern; durable as
:class:`~semps.broker.sqlite_store.SQLiteStore`) and hands the notifications to the
channels (:class:`~semps.broker.fanout.Fanout` to live streams, the
:class:`~semps.broker.webhooks.WebhookDispatcher`). A notification's wire form is
:mod:`semps.broker.payload`'s. HTTP concerns (bearer headers, metrics text) belong to
:mod:`semps.api`.
"""
