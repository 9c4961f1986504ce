package q6

// The keys of the result's tables (result.Table.Key): the report and the
// paper find them by these keys, whatever their titles say.
const (
	TableWindows  = "burst_base_windows"
	TableBursts   = "bursts"
	TableRecovery = "burst_recovery"
)
