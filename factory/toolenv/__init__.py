"""The tool server, as the host sees it.

The tool server and its domains run inside tool task containers; their one source is
``environments/tools/toolenv/`` (copied into every tool task as ``/opt/toolenv/toolenv``). This
package only points its ``__path__`` there, so ``factory.toolenv.core``,
``factory.toolenv.domains.airline`` and the rest are those very files: the tool families run a
task's reference calls on the host with exactly the code the container will serve. The code
there is standard library only and imports nothing from ``factory`` (see CONTRIBUTING.md).
"""

from factory.resources import toolenv_dir

__path__ = [str(toolenv_dir())]
