"""Reference solutions for tasks that ship none (``factory solve``): an agent's passing episode
replayed as ``solution/solve.sh``, installed only once it certifies."""
