"""Tool families: each serves one tool domain (a JSON database, tools and a policy) to the agent.
One folder per family; :mod:`.toolfamily` holds their base class and what they share."""
