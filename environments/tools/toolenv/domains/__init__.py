"""One module per tool domain; each defines ``DOMAIN`` (a :class:`toolenv.core.Domain`)."""
