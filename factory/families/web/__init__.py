"""Web families: each ships a small stateful web app (built on the shared webkit) that the agent
uses through a text browser. One folder per family; :mod:`.webfamily` holds their base class."""
