package ray_test

import (
	"fmt"
	"strings"

	"github.com/sagebench/sagebench/internal/ray"
)

// A run's job is named after the run, so submitting it again finds it.
func ExampleSubmissionID() {
	fmt.Println(ray.SubmissionID("q1-ray-0-1a2b3c4d"))
	// Output: sagebench-q1-ray-0-1a2b3c4d
}

// The driver's records come back from the job's log.
func ExampleParseOutput() {
	logs := strings.Join([]string{
		"2026-12-01 12:00:00 INFO worker.py -- Connecting to existing Ray cluster",
		`SAGEBENCH_META {"ray_version":"2.52.0","cluster_resources":{"CPU":8},"start_unix_ns":1,"runtime":"ray"}`,
		`SAGEBENCH_RECORD {"id":"txn-000000","kind":"txn","ok":true}`,
		`SAGEBENCH_DONE {"records":1}`,
	}, "\n")
	out, err := ray.ParseOutput(logs)
	fmt.Println(len(out.Records), out.Done, out.Meta.RayVersion, out.Meta.ClusterResources["CPU"], err)
	// Output: 1 true 2.52.0 8 <nil>
}
