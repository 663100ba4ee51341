"""The run layer: one model over a list of tasks: options, orchestration, stability bands,
the Ray driver and workers. The entry point is runner.run; each job of a run has its module: options and
flags (what a run is told), resume (which tasks are done), model (the model's sides and embedder), task
(one task's evaluation), record (its result file), summary (what the run hands back), plan (the dry run).

It may import its own modules and the layers below it: maeb.core, maeb.audio, maeb.data, maeb.encoders,
maeb.engine, maeb.metrics, maeb.audiogen, maeb.tasktypes, maeb.spec, maeb.results, maeb.analysis.
The floors, their rooms and the arrows between them: docs/architecture.md."""
