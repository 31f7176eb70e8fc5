"""Stage 4: the package's files from jinja2 templates. In: `ApiPlan` and `Models`. Out: path -> text."""
