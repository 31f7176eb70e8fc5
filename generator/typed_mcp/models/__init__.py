"""Stage 3: pydantic models of every schema the plan uses (the only importer of
datamodel-code-generator), cut one module per model. In: `Document` and `ApiPlan`. Out: `build.Models`."""
