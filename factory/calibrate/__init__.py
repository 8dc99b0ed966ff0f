"""`factory calibrate`: a suite's difficulty measured with the policy in the loop.

Each task's pass rate is estimated from k episodes of a policy (a local model on CPU, or a
model behind an OpenAI-compatible endpoint) with the reward from the task's own verifier,
stored in its ``[metadata.factory]`` and held against a band: tasks inside it stay, tasks the
policy (nearly) always solves are retired to ``SUITE/retired/``, tasks below it stay flagged
'too-hard' (or are retired too, on request). Leaves left with fewer in-band tasks than their
quota can be refilled by the generators (``--regenerate``). A journal makes reruns resume.

Modules: :mod:`band` (the band and the verdicts), :mod:`journal` (the per-task journal and the
content hash it is keyed by), :mod:`suite` (stamping, retiring, the manifest), :mod:`regenerate`
(new candidates for thin leaves), :mod:`run` (the whole job) and :mod:`display` (progress and
summary). The policy's episodes come from :mod:`factory.agent.runners`.
"""
