"""Apache Beam pipelines over tokfx: thin composite transforms, options and entry points."""
