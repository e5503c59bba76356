"""Layer: the runtime: composes the layers below into `run` and the one-shot tasks."""
