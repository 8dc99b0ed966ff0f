"""Publishing a suite: export to JSONL / Harbor registry / Hugging Face parquet, import back,
and the self-contained HTML report.

Modules (each small, imported on use so ``import factory`` stays light)::

    models     pydantic models of every file the formats write
    errors     named errors (file and field in the message)
    source     the tasks of a suite (or of a plain folder of tasks) with their metadata
    tree       a task directory <-> a list of file entries (path, bytes, mode, link)
    items      what an import reader yields (one task to rebuild + its recorded hash)
    jsonl      tasks.jsonl index + copied task dirs
    harbor     Harbor registry.json dataset entry, dataset.toml + task dirs
    harbor_digest  Harbor's own package digest of a task (as `harbor publish` computes it)
    hf         Hugging Face ``datasets`` parquet + dataset card; ``load_tasks`` rebuilds dirs
    api        export_suite / import_export (format detection)
    report     factory report: statistics + HTML; svg: the inline charts
"""
