"""Terminal families: tasks solved in a shell inside the container. One folder per family
(``<family>/family.py`` beside its ``templates/``); the modules here hold what several terminal
families share."""
