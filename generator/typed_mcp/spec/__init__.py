"""Stage 1: read an OpenAPI document (file or URL), bundle multi-file documents, convert Swagger 2.0,
and repair what the code generator would misread. In: a source. Out: `normalize.Document`."""
