"""Stage 2: the plan, the one intermediate representation between the spec and every output: one
`ir.Operation` per tool (names, parameters, bodies, responses, security). In: `Document`. Out: `ir.ApiPlan`."""
