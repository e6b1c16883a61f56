"""KIP-848's consumer group protocol: its properties, its walker, the command that walks it, its
worlds in a campaign, and the judge of a broker's KIP-848 coordinator over TCP (the model is
``model/kip848``; see docs/kip848.md)."""
