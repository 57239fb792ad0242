"""Bridges between the broker and other protocols: MQTT in and out (:mod:`semps.bridges.mqtt`)."""
