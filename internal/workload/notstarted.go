package workload

// NotStartedError marks a failure before a run's traffic began, such as a
// distributed runtime or a Ray job that could not start (cluster
// unreachable, workers that never joined, a job that ended before its
// driver was ready). Nothing was measured, so the runner leaves no run
// directory for the repetition.
type NotStartedError struct{ Err error }

func (e *NotStartedError) Error() string { return e.Err.Error() }
func (e *NotStartedError) Unwrap() error { return e.Err }
