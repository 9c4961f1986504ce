package q4

// The keys of the result's tables (result.Table.Key): the report and the
// paper find them by these keys, whatever their titles say.
const (
	TableFrontier = "frontier"
	TableProbes   = "probes"
)
